//! What a generated part is compared by: the masks that leave out what a
//! timing block's times or a live run's counts change, and the diff shown
//! when a part differs.

/// `text` with every timing figure replaced by `#`: numbers with a decimal
/// point, numbers followed by `runs/s` or `states/s`, and numbers under a
/// column headed `.../s` (right-aligned: they end where the heading does);
/// and runs of spaces made one, since a figure's width moves the columns.
pub fn mask_timing(text: &[String]) -> Vec<String> {
    let mut rate_columns: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for line in text {
        if line.trim().is_empty() {
            rate_columns.clear();
        }
        let words = word_spans(line);
        if words.iter().any(|&(s, e)| line[s..e].ends_with("/s"))
            && !words.iter().any(|&(s, e)| is_number(&line[s..e]))
        {
            // A heading: the columns that hold rates end here.
            rate_columns = words
                .iter()
                .filter(|&&(s, e)| line[s..e].ends_with("/s"))
                .map(|&(_, e)| e)
                .collect();
        }
        let mut masked = String::new();
        let mut last = 0;
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let boundary =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            if !(bytes[i].is_ascii_digit() && boundary) {
                i += 1;
                continue;
            }
            let mut end = i;
            while end < bytes.len()
                && (bytes[end].is_ascii_digit()
                    || ((bytes[end] == b'.' || bytes[end] == b',')
                        && end + 1 < bytes.len()
                        && bytes[end + 1].is_ascii_digit()))
            {
                end += 1;
            }
            let number = &line[i..end];
            let after = line[end..].trim_start();
            let timing = number.contains('.')
                || after.starts_with("runs/s")
                || after.starts_with("states/s")
                || rate_columns.contains(&end);
            masked.push_str(&line[last..i]);
            masked.push_str(if timing { "#" } else { number });
            last = end;
            i = end;
        }
        masked.push_str(&line[last..]);
        // A figure of another width moves the columns after it.
        out.push(masked.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

/// `text` with every number replaced by `#` (and runs of spaces made one):
/// what is left of a live run's output is what does not depend on timing.
pub fn mask_counts(text: &[String]) -> Vec<String> {
    text.iter()
        .map(|line| {
            let mut masked = String::new();
            let mut in_number = false;
            for (i, c) in line.char_indices() {
                let before = line[..i].chars().next_back();
                let starts = c.is_ascii_digit()
                    && !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == '_' || b == '-');
                let continues = in_number
                    && (c.is_ascii_digit()
                        || ((c == '.' || c == ',')
                            && line[i + 1..].starts_with(|n: char| n.is_ascii_digit())));
                if starts || continues {
                    if !in_number {
                        masked.push('#');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    masked.push(c);
                }
            }
            // A steer table's cell is the run a window was first reached
            // in, or none within the runs: which one a free run gives is
            // the threads' doing, like its numbers.
            masked
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("none in #", "run #")
        })
        .collect()
}

fn word_spans(line: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, line.len()));
    }
    spans
}

/// `1,566,124` or `0.03`, not `1st` or `R2`.
fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
}

/// The lines that differ, as a unified-style listing (`-` README, `+` now).
pub fn diff(old: &[String], new: &[String]) -> String {
    let (n, m) = (old.len(), new.len());
    // Longest common subsequence, from the end.
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("- {}\n", old[i]));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", new[j]));
            j += 1;
        }
    }
    out
}
