//! The coverage plan (issue 25 item 1): every cell of each model's grid
//! that the plan does not leave out is covered by a scenario file that
//! expects something of every design.

use crate::common;

use crate::common::{code, slotcheck, stdout};
use slotcheck::commands::grid::{GRIDS, STOVEPIPE};
use slotcheck::scenario::grid::coverage;

fn shipped() -> Vec<slotcheck::scenario::Scenario> {
    let dir = std::path::Path::new(common::ROOT).join("scenarios");
    let files = slotcheck::scenario::files(&[dir]).unwrap();
    slotcheck::scenario::load_all(&files, &Default::default()).unwrap()
}

#[test]
fn every_cell_the_plan_wants_is_covered_by_a_scenario_of_every_design() {
    let scenarios = shipped();
    for grid in GRIDS {
        let cells = coverage(grid, &scenarios);
        let missing: Vec<String> = cells
            .iter()
            .filter(|c| c.missing())
            .map(|c| c.name())
            .collect();
        assert!(
            missing.is_empty(),
            "{}: cells not covered: {missing:?}",
            grid.model
        );
        // A left-out cell that a file covers after all is no longer left out.
        for cell in cells.iter().filter(|c| c.left_out.is_some()) {
            assert!(
                cell.covered_by.iter().all(|id| id.ends_with(" (slow)")),
                "{}: ({}) is left out but {:?} cover it",
                grid.model,
                cell.name(),
                cell.covered_by
            );
        }
    }
}

#[test]
fn a_cell_whose_only_file_is_gone_is_reported_missing_and_check_grid_exits_1() {
    let scenarios: Vec<_> = shipped()
        .into_iter()
        .filter(|s| s.heading.id != "grid-2-slots-stall-1-delivery-2-requests")
        .collect();
    let cells = coverage(&STOVEPIPE, &scenarios);
    let missing: Vec<String> = cells
        .iter()
        .filter(|c| c.missing())
        .map(|c| c.name())
        .collect();
    assert_eq!(
        missing,
        ["2 slots, stalls only, 1 delivery, 2 requests, one snapshot"]
    );

    let output = slotcheck(&["check", "--grid"]);
    assert_eq!(code(&output), 0, "{}", stdout(&output));
    assert!(
        stdout(&output).contains("48 cells: "),
        "{}",
        stdout(&output)
    );
    let dir = common::scratch("grid", "partial");
    std::fs::create_dir_all(&dir).unwrap();
    let source = std::path::Path::new(common::ROOT).join("scenarios/SP-OCT-005.toml");
    std::fs::copy(source, dir.join("SP-OCT-005.toml")).unwrap();
    let output = slotcheck(&["check", "--grid", dir.to_str().unwrap()]);
    assert_eq!(code(&output), 1, "{}", stdout(&output));
    assert!(stdout(&output).lines().any(|l| l
        .contains("1 slot, crashes only, 2 deliveries, 2 requests, one snapshot")
        && l.ends_with("covered by SP-OCT-005")));
    assert!(stdout(&output).contains("MISSING: no scenario covers it"));
}

/// The read is an axis (issue 35 item 2): the split-read cells are counted,
/// the two-request ones covered, and a file that reads in one snapshot
/// covers no split-read cell.
#[test]
fn split_read_cells_are_counted_and_the_two_request_ones_covered() {
    let scenarios = shipped();
    let cells = coverage(&STOVEPIPE, &scenarios);
    let split: Vec<_> = cells
        .iter()
        .filter(|c| c.levels.last() == Some(&"split reads"))
        .collect();
    assert_eq!(split.len(), 24);
    for cell in &split {
        if cell.levels.contains(&"2 requests") {
            assert!(
                cell.covered_regularly() && cell.covered_by.iter().all(|id| id.contains("split")),
                "({}) {:?}",
                cell.name(),
                cell.covered_by
            );
        } else {
            assert!(cell.left_out.is_some(), "({})", cell.name());
        }
    }
    assert!(cells
        .iter()
        .find(|c| c.name() == "1 slot, stalls only, 2 deliveries, 2 requests, split reads")
        .unwrap()
        .covered_by
        .contains(&"split-read-stale-head".to_string()));
}
