//! The four designs differ in two switches only: whether a builder checks the
//! bucket of checks running before it runs an ask, and whether a fetch's
//! server-side request ends clearly before the fetch does. Everything else is
//! the same code, so a verdict that differs between designs is one of these
//! two switches.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Design {
    /// The name on the command line and in reports: `after-1649`.
    pub name: &'static str,
    /// One sentence for reports.
    pub summary: &'static str,
    /// Drop an ask whose running key names another builder, fresh by this
    /// builder's clock (step 3 of the contract).
    pub duplicate_check: bool,
    /// The fetch margin: without it a fetch's answer can land after the fetch
    /// gave up, in the buffer of a builder that has moved on.
    pub fetch_margin: bool,
}

/// Every design, in the order reports show them.
pub static DESIGNS: [Design; 4] = [
    Design {
        name: "before-1649",
        summary:
            "no duplicate check, no fetch margin (late answers land in busy builders' buffers)",
        duplicate_check: false,
        fetch_margin: false,
    },
    Design {
        name: "after-1649",
        summary: "the duplicate check against the running bucket, and the fetch margin",
        duplicate_check: true,
        fetch_margin: true,
    },
    Design {
        name: "check-only",
        summary: "the duplicate check without the fetch margin",
        duplicate_check: true,
        fetch_margin: false,
    },
    Design {
        name: "margin-only",
        summary: "the fetch margin without the duplicate check",
        duplicate_check: false,
        fetch_margin: true,
    },
];

/// The design with this name.
pub fn design_named(name: &str) -> Option<&'static Design> {
    DESIGNS.iter().find(|d| d.name == name)
}
