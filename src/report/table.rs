//! Text tables: one renderer (comfy-table lays out the columns), so no
//! table is padded by hand and a long name widens its column instead of
//! breaking the layout. Plain columns with two spaces between them, no
//! borders, no trailing blanks; colour goes on after the layout, so its
//! escape codes never count as width.

use super::Style;
use crate::check::Verdict;
use comfy_table::{presets, CellAlignment, ColumnConstraint, Table, Width};

/// Spaces between two columns.
const GAP: u16 = 2;

/// A column: its heading, where its cells sit, and the width it keeps
/// whatever its cells (so the same table lines up from run to run).
#[derive(Clone, Debug)]
pub struct Column {
    pub heading: String,
    pub right: bool,
    pub min_width: usize,
}

impl Column {
    pub fn left(heading: &str) -> Self {
        Column {
            heading: heading.to_string(),
            right: false,
            min_width: 0,
        }
    }

    pub fn right(heading: &str) -> Self {
        Column {
            right: true,
            ..Column::left(heading)
        }
    }

    pub fn at_least(mut self, width: usize) -> Self {
        self.min_width = width;
        self
    }
}

/// A cell's text, and the verdict whose colour it takes on a terminal.
#[derive(Clone, Debug)]
pub struct Cell {
    pub text: String,
    pub tone: Option<Verdict>,
}

impl Cell {
    pub fn painted(text: impl Into<String>, tone: Verdict) -> Self {
        Cell {
            text: text.into(),
            tone: Some(tone),
        }
    }
}

impl<T: Into<String>> From<T> for Cell {
    fn from(text: T) -> Self {
        Cell {
            text: text.into(),
            tone: None,
        }
    }
}

/// A table to print: columns, rows, and the margin every line starts with.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Printed before every line (`"  "` indents the table).
    pub margin: String,
    /// Without a heading line.
    pub headless: bool,
}

impl TextTable {
    pub fn new(columns: Vec<Column>) -> Self {
        TextTable {
            columns,
            ..TextTable::default()
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// The heading line alone (with its newline), laid out on the columns'
    /// least widths: for a table printed a row at a time as each is decided.
    pub fn heading(&self, style: Style) -> String {
        TextTable {
            rows: Vec::new(),
            ..self.clone()
        }
        .render(style)
    }

    /// One row alone (with its newline), laid out on the columns' least
    /// widths, so that rows printed one by one line up under [`Self::heading`]
    /// (a cell wider than its column pushes the rest of its own row only).
    pub fn line(&self, cells: Vec<Cell>, style: Style) -> String {
        TextTable {
            rows: vec![cells],
            headless: true,
            ..self.clone()
        }
        .render(style)
    }

    /// The table as lines, each ending in a newline; the heading in bold and
    /// the toned cells in their verdict's colour when `style` has colour.
    pub fn render(&self, style: Style) -> String {
        let mut table = Table::new();
        table.load_style(presets::NOTHING);
        if !self.headless {
            table.set_header(self.columns.iter().map(|c| c.heading.as_str()));
        }
        for row in &self.rows {
            table.add_row(row.iter().map(|c| c.text.as_str()));
        }
        for (column, spec) in table.column_iter_mut().zip(&self.columns) {
            column.set_padding((0, GAP));
            if spec.right {
                column.set_cell_alignment(CellAlignment::Right);
            }
            if spec.min_width > 0 {
                // comfy-table's bound counts the padding too.
                let width = u16::try_from(spec.min_width).unwrap_or(u16::MAX) + GAP;
                column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(width)));
            }
        }
        let mut lines = table.lines().map(|l| l.trim_end().to_string());
        let mut out = String::new();
        if !self.headless {
            let heading = lines.next().unwrap_or_default();
            out.push_str(&format!("{}{}\n", self.margin, style.bold(&heading)));
        }
        for (line, row) in lines.zip(&self.rows) {
            out.push_str(&self.margin);
            out.push_str(&paint(&line, row, style));
            out.push('\n');
        }
        out
    }
}

/// A laid-out row with each toned cell painted: the cells are found left to
/// right, each after the one before.
fn paint(line: &str, row: &[Cell], style: Style) -> String {
    if !style.color {
        return line.to_string();
    }
    let mut out = String::new();
    let mut rest = line;
    for cell in row {
        let Some(at) = rest.find(cell.text.as_str()) else {
            continue;
        };
        let end = at + cell.text.len();
        out.push_str(&rest[..at]);
        match cell.tone {
            Some(tone) => out.push_str(&style.verdict(tone, &cell.text)),
            None => out.push_str(&cell.text),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
