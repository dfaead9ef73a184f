//! ASCII sparklines (Redis's sparkline.c): a series of samples drawn as a
//! few rows of text, with a label under each column. LATENCY GRAPH is the
//! one user (latency.rs `latency_command_gen_sparkline`), as in Redis; the
//! drawing lives apart because it knows nothing about latency.

/// The characters of one row, lowest to highest; four rows stacked give
/// 12 levels. With SPARKLINE_FILL the area under the line is drawn too:
/// `_o#` for the top of a column and `|` below it.
const SPARKLINE_CHARSET: &[u8] = b"_-`";
const SPARKLINE_CHARSET_FILL: &[u8] = b"_o#";
/// One blank row between the graph and the vertical labels.
const SPARKLINE_LABEL_MARGIN_TOP: usize = 1;

/// Flags of sparklineRender. LATENCY GRAPH uses SPARKLINE_FILL only.
pub const SPARKLINE_FILL: u32 = 1;
pub const SPARKLINE_LOG_SCALE: u32 = 2;

/// struct sequence: the samples to draw, each with an optional label
/// printed vertically under its column.
#[derive(Default, Debug)]
pub struct SparklineSequence {
    samples: Vec<(f64, Option<String>)>,
    min: f64,
    max: f64,
    labels: usize,
}

impl SparklineSequence {
    pub fn new() -> Self {
        Self::default()
    }

    /// sparklineSequenceAddSample.
    pub fn add_sample(&mut self, value: f64, label: Option<String>) {
        let label = label.filter(|l| !l.is_empty());
        if self.samples.is_empty() {
            self.min = value;
            self.max = value;
        } else if value < self.min {
            self.min = value;
        } else if value > self.max {
            self.max = value;
        }
        if label.is_some() {
            self.labels += 1;
        }
        self.samples.push((value, label));
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// sparklineRender: the sequence in blocks of `columns` samples, a blank
/// line between blocks.
pub fn sparkline_render(
    out: &mut String,
    seq: &SparklineSequence,
    columns: usize,
    rows: usize,
    flags: u32,
) {
    let mut start = 0;
    while start < seq.len() {
        let len = (seq.len() - start).min(columns);
        if start != 0 {
            out.push('\n');
        }
        sparkline_render_range(out, seq, rows, start, len, flags);
        start += columns;
    }
}

/// sparklineRenderRange: draw samples offset..offset+len, top row first.
/// Each sample maps to one of rows*3 steps between the sequence's min and
/// max; a row prints the character for the part of the step that falls in
/// it. Then, after one blank row, the labels one character per row.
fn sparkline_render_range(
    out: &mut String,
    seq: &SparklineSequence,
    rows: usize,
    offset: usize,
    len: usize,
    flags: u32,
) {
    let charset_len = SPARKLINE_CHARSET.len() as i64;
    let steps = charset_len * rows as i64;
    let fill = flags & SPARKLINE_FILL != 0;
    let log_scale = flags & SPARKLINE_LOG_SCALE != 0;
    let mut relmax = seq.max - seq.min;
    if log_scale {
        relmax = (relmax + 1.0).ln();
    } else if relmax == 0.0 {
        relmax = 1.0;
    }

    let mut row = 0usize;
    loop {
        let mut more = false;
        let mut chars = vec![b' '; len];
        for (j, ch) in chars.iter_mut().enumerate() {
            let (value, label) = &seq.samples[j + offset];
            let mut relval = value - seq.min;
            if log_scale {
                relval = (relval + 1.0).ln();
            }
            // C: step = (int)(relval*steps)/relmax; truncating twice.
            let step = (((relval * steps as f64) as i64) as f64 / relmax) as i64;
            let step = step.clamp(0, steps - 1);

            if row < rows {
                // The graph: which character of this row, if any.
                more = true;
                let charidx = step - (rows - row - 1) as i64 * charset_len;
                if (0..charset_len).contains(&charidx) {
                    let set = if fill {
                        SPARKLINE_CHARSET_FILL
                    } else {
                        SPARKLINE_CHARSET
                    };
                    *ch = set[charidx as usize];
                } else if fill && charidx >= charset_len {
                    *ch = b'|';
                }
            } else {
                // The blank row before the labels.
                if seq.labels > 0 && row - rows < SPARKLINE_LABEL_MARGIN_TOP {
                    more = true;
                    break;
                }
                // The labels, one character per row.
                if let Some(label) = label {
                    let label_char = row - rows - SPARKLINE_LABEL_MARGIN_TOP;
                    if let Some(&b) = label.as_bytes().get(label_char) {
                        more = true;
                        *ch = b;
                    }
                }
            }
        }
        if !more {
            break;
        }
        row += 1;
        out.push_str(&String::from_utf8_lossy(&chars));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_of_a_flat_series_is_a_baseline() {
        let mut seq = SparklineSequence::new();
        for _ in 0..3 {
            seq.add_sample(5.0, None);
        }
        let mut out = String::new();
        sparkline_render(&mut out, &seq, 80, 4, SPARKLINE_FILL);
        assert_eq!(out, "   \n   \n   \n___\n");
    }
}
