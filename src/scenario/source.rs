//! Where bad input is: a scenario file's text, turning a byte offset into
//! a line, a column and the dotted key (`bounds.requests`) of an error.

use crate::report::line_column;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Bad input: the file, where in it (when known), the field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    /// 1-based line and column.
    pub at: Option<(usize, usize)>,
    /// The dotted key, e.g. `bounds.requests`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.at {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": ")?;
        if let Some(field) = &self.field {
            write!(f, "`{field}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

/// A file's text, for turning byte offsets into positions and field names.
pub(super) struct Source<'a> {
    pub(super) file: &'a Path,
    pub(super) text: &'a str,
}

impl Source<'_> {
    pub(super) fn error(
        &self,
        span: Option<std::ops::Range<usize>>,
        field: Option<String>,
        message: impl Into<String>,
    ) -> InputError {
        InputError {
            file: self.file.to_path_buf(),
            at: span.map(|s| line_column(self.text, s.start)),
            field,
            message: message.into(),
        }
    }

    pub(super) fn at<T>(
        &self,
        spanned: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> InputError {
        self.error(Some(spanned.span()), Some(field.into()), message)
    }

    /// The byte range of the `[TABLE]` header's table (to the next header),
    /// or the whole text.
    pub(super) fn table(&self, table: &str) -> std::ops::Range<usize> {
        let header = format!("[{table}]");
        match self.text.find(&header) {
            Some(start) => {
                let body = start + header.len();
                let end = self.text[body..]
                    .find("\n[")
                    .map_or(self.text.len(), |i| body + i + 1);
                start..end
            }
            None => 0..self.text.len(),
        }
    }

    /// An error at a table key: at its `[TABLE.KEY]` header or its `KEY =`
    /// line in the table, else at the table.
    pub(super) fn key(&self, table: &str, key: &str, message: impl Into<String>) -> InputError {
        let within = self.table(table);
        let field = format!("{table}.{key}");
        let header = format!("[{field}]");
        // A key that is not bare (a composition, `a+b`) is written quoted.
        let quoted = format!("[{table}.\"{key}\"]");
        let found = self.text.find(&header).map(|i| i + 1);
        let found = found.or_else(|| self.text.find(&quoted).map(|i| i + 1));
        let found = found.or_else(|| {
            let region = &self.text[within.clone()];
            let mut offset = 0;
            for line in region.split_inclusive('\n') {
                let trimmed = line.trim_start();
                let bare = trimmed.trim_start_matches('"');
                if bare.starts_with(key)
                    && bare[key.len()..]
                        .trim_start_matches('"')
                        .trim_start()
                        .starts_with('=')
                {
                    return Some(within.start + offset + (line.len() - trimmed.len()));
                }
                offset += line.len();
            }
            None
        });
        let start = found.unwrap_or(within.start);
        self.error(Some(start..start), Some(field), message)
    }

    /// A `toml` error, with the field guessed from the text at its span
    /// (the crate does not expose the key path).
    pub(super) fn toml(&self, error: toml::de::Error) -> InputError {
        let span = error.span();
        let message = error.message().trim_end().replace('\n', "; ");
        // A missing field is reported at its table: the header names it, a
        // key on the line would not be the field.
        let field = span.as_ref().and_then(|s| {
            let at_header = self.text[s.start.min(self.text.len())..].starts_with('[');
            if message.starts_with("missing field") && !at_header {
                None
            } else {
                field_at(self.text, s.start)
            }
        });
        self.error(span, field, message)
    }
}

/// The dotted key at a byte offset of a TOML text: the last table header
/// above it, the key of its line (or of the multi-line array it sits in),
/// and an inline table's inner key. A best effort for error messages.
pub(super) fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut header: Option<String> = None;
    let mut array_key: Option<String> = None;
    for line in text[..line_start].lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            header = Some(
                trimmed
                    .trim_matches(|c| c == '[' || c == ']')
                    .trim()
                    .to_string(),
            );
            array_key = None;
        } else if let Some((key, value)) = trimmed.split_once('=') {
            let open = value.trim_start().starts_with('[') && !value.contains(']');
            array_key = open.then(|| unquote(key));
        } else if trimmed.starts_with(']') {
            array_key = None;
        }
    }
    let line = &text[line_start..line_end];
    let column = offset - line_start;
    // The prefix up to the end of the word at the offset (an unknown key's
    // span starts at the key itself).
    let word_end = line[column..]
        .find(|c: char| c.is_whitespace() || c == '=' || c == ',' || c == '}')
        .map_or(line.len(), |i| column + i);
    let prefix = &line[..word_end];
    let mut keys: Vec<String> = Vec::new();
    if line.trim_start().starts_with('[') {
        return header_of(line);
    }
    let mut rest = prefix;
    while let Some(eq) = rest.find('=') {
        let key_text = &rest[..eq];
        let key = key_text
            .rsplit(['{', ','])
            .next()
            .map(unquote)
            .unwrap_or_default();
        if !key.is_empty() {
            keys.push(key);
        }
        rest = &rest[eq + 1..];
    }
    let tail = unquote(rest.rsplit(['{', ',']).next().unwrap_or(""));
    let tail_is_key =
        !tail.is_empty() && !rest.contains('"') && line[word_end..].trim_start().starts_with('=');
    if tail_is_key {
        keys.push(tail);
    }
    if keys.len() > 2 {
        keys.drain(1..keys.len() - 1);
    }
    if keys.is_empty() {
        if let Some(key) = array_key {
            keys.push(key);
        }
    }
    let mut parts: Vec<String> = header.into_iter().collect();
    parts.extend(keys);
    (!parts.is_empty()).then(|| parts.join("."))
}

pub(super) fn header_of(line: &str) -> Option<String> {
    let name = line.trim().trim_matches(|c| c == '[' || c == ']').trim();
    (!name.is_empty()).then(|| name.to_string())
}

pub(super) fn unquote(key: &str) -> String {
    key.trim().trim_matches('"').trim().to_string()
}
