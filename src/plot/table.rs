//! A result folder's CSV files read back: whole (`summary.csv`, `aggregate.csv`) as
//! text cells, or one record at a time (the long time series).
//!
//! Empty cells are `None`; a cell that is neither empty nor a number is an error that
//! names the file, the line and the column.

use std::path::{Path, PathBuf};

use super::PlotError;

#[cfg(not(target_arch = "wasm32"))]
/// A CSV file held as text cells, with its header.
#[derive(Debug, Clone)]
pub(crate) struct CsvTable {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// Column names.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as the header.
    pub rows: Vec<Vec<String>>,
    /// The line of each row in the file (1-based; the header is line 1).
    pub lines: Vec<u64>,
}

#[cfg(not(target_arch = "wasm32"))]
impl CsvTable {
    /// Reads `path`; every row must have as many fields as the header.
    pub(crate) fn read(path: &Path) -> Result<CsvTable, PlotError> {
        let cap = crate::export::read::MAX_TABLE_BYTES;
        let bytes = crate::export::read::read(path, cap).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &bytes)
    }

    /// Parses CSV bytes, naming `path` in errors.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<CsvTable, PlotError> {
        let bad = |message: String| PlotError::Csv {
            path: path.to_path_buf(),
            message,
        };
        let mut r = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(bytes);
        let headers: Vec<String> = r
            .headers()
            .map_err(|e| bad(e.to_string()))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(bad("the file has no header line".into()));
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            lines.push(rec.position().map_or(0, |p| p.line()));
            rows.push(rec.iter().map(|c| c.trim().to_string()).collect());
        }
        Ok(CsvTable {
            path: path.to_path_buf(),
            headers,
            rows,
            lines,
        })
    }

    /// Whether the table has column `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h == name)
    }

    /// The index of column `name`, or an error naming the file.
    pub(crate) fn index(&self, name: &str) -> Result<usize, PlotError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PlotError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
            })
    }

    /// Column `name` as numbers: empty cells are `None`, `true`/`false` are 1/0.
    pub(crate) fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>, PlotError> {
        let i = self.index(name)?;
        self.rows
            .iter()
            .zip(&self.lines)
            .map(|(row, line)| self.number_at(&row[i], *line, name))
            .collect()
    }

    /// Column `name` as numbers when the column exists, else all `None`.
    pub(crate) fn numbers_or_empty(&self, name: &str) -> Result<Vec<Option<f64>>, PlotError> {
        if self.has(name) {
            self.numbers(name)
        } else {
            Ok(vec![None; self.rows.len()])
        }
    }

    /// Column `name` as text.
    pub(crate) fn texts(&self, name: &str) -> Result<Vec<&str>, PlotError> {
        let i = self.index(name)?;
        Ok(self.rows.iter().map(|r| r[i].as_str()).collect())
    }

    /// Column `name` as non-negative integers (run indices); empty cells are errors.
    pub(crate) fn integers(&self, name: &str) -> Result<Vec<u64>, PlotError> {
        let i = self.index(name)?;
        self.rows
            .iter()
            .zip(&self.lines)
            .map(|(row, line)| integer_cell(&self.path, &row[i], *line, name))
            .collect()
    }

    fn number_at(&self, cell: &str, line: u64, column: &str) -> Result<Option<f64>, PlotError> {
        number_cell(&self.path, cell, line, column)
    }
}

/// A cell of a number column: empty = `None`, else a number, or an error naming the
/// file, the line and the column.
fn number_cell(path: &Path, cell: &str, line: u64, column: &str) -> Result<Option<f64>, PlotError> {
    parse_number(cell).map_err(|_| PlotError::BadValue {
        path: path.to_path_buf(),
        line,
        column: column.to_string(),
        expected: "a number or an empty cell",
        found: cell.to_string(),
    })
}

/// A cell of a run-index column: a non-negative integer, or an error as [`number_cell`].
fn integer_cell(path: &Path, cell: &str, line: u64, column: &str) -> Result<u64, PlotError> {
    cell.parse::<u64>().map_err(|_| PlotError::BadValue {
        path: path.to_path_buf(),
        line,
        column: column.to_string(),
        expected: "a whole number",
        found: cell.to_string(),
    })
}

/// A CSV file read one record at a time (the time series can have millions of rows:
/// they are parsed into typed columns as they are read, never held as text); a file,
/// or a file's text already in memory (the playground's).
pub(super) struct CsvStream<R = std::io::BufReader<std::fs::File>> {
    path: PathBuf,
    reader: ::csv::Reader<R>,
    headers: Vec<String>,
    record: ::csv::StringRecord,
}

#[cfg(not(target_arch = "wasm32"))]
impl CsvStream {
    /// Opens `path` and reads its header, with the errors of [`CsvTable::read`].
    pub(super) fn open(path: &Path) -> Result<CsvStream, PlotError> {
        let (file, _) = crate::export::read::open(path).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        CsvStream::new(path, std::io::BufReader::with_capacity(1 << 16, file))
    }
}

impl<'a> CsvStream<&'a [u8]> {
    /// Reads the header of `text`, the contents of a file `path` (named in errors).
    pub(super) fn of_text(path: &Path, text: &'a str) -> Result<CsvStream<&'a [u8]>, PlotError> {
        CsvStream::new(path, text.as_bytes())
    }
}

impl<R: std::io::Read> CsvStream<R> {
    /// Reads the header from `input`, the contents of `path`.
    fn new(path: &Path, input: R) -> Result<CsvStream<R>, PlotError> {
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(input);
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| csv_error(path, &e))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(PlotError::Csv {
                path: path.to_path_buf(),
                message: "the file has no header line".into(),
            });
        }
        Ok(CsvStream {
            path: path.to_path_buf(),
            reader,
            headers,
            record: ::csv::StringRecord::new(),
        })
    }

    /// The file read (for messages).
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The index of column `name`, or an error naming the file.
    pub(super) fn index(&self, name: &str) -> Result<usize, PlotError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PlotError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
            })
    }

    /// Reads the next record; its line (1-based) when there is one.
    pub(super) fn next(&mut self) -> Result<Option<u64>, PlotError> {
        if !self
            .reader
            .read_record(&mut self.record)
            .map_err(|e| csv_error(&self.path, &e))?
        {
            return Ok(None);
        }
        Ok(Some(self.record.position().map_or(0, |p| p.line())))
    }

    /// Cell `i` of the current record, trimmed.
    fn cell(&self, i: usize) -> &str {
        self.record.get(i).unwrap_or("").trim()
    }

    /// Cell `i` of the current record as text, trimmed, without the `'` the writer
    /// puts before text a spreadsheet would run (a service `-db` is written `'-db`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn text(&self, i: usize) -> &str {
        crate::export::csv::uncell(self.cell(i))
    }

    /// Cell `i` of the current record (at `line`) as a number or `None`.
    pub(super) fn number(&self, i: usize, line: u64) -> Result<Option<f64>, PlotError> {
        number_cell(&self.path, self.cell(i), line, &self.headers[i])
    }

    /// Cell `i` of the current record (at `line`) as a run index.
    pub(super) fn integer(&self, i: usize, line: u64) -> Result<u64, PlotError> {
        integer_cell(&self.path, self.cell(i), line, &self.headers[i])
    }
}

fn csv_error(path: &Path, e: &::csv::Error) -> PlotError {
    PlotError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A cell that is neither empty nor a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotANumber;

/// Parses a cell: empty = `None`, `true`/`false` = 1/0, else a finite number.
pub(crate) fn parse_number(cell: &str) -> Result<Option<f64>, NotANumber> {
    match cell {
        "" => Ok(None),
        "true" => Ok(Some(1.0)),
        "false" => Ok(Some(0.0)),
        _ => match cell.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(NotANumber),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> CsvTable {
        CsvTable::parse(Path::new("d/x.csv"), text.as_bytes()).unwrap()
    }
    #[test]
    fn empty_cells_are_none_and_bad_cells_name_file_line_and_column() {
        let t = table("a,b\n1,\n2,x\n");
        assert_eq!(t.numbers("a").unwrap(), vec![Some(1.0), Some(2.0)]);
        let e = t.numbers("b").unwrap_err().to_string();
        assert!(e.contains("'d/x.csv'"), "{e}");
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("column 'b'"), "{e}");
        assert!(e.contains("found 'x'"), "{e}");
        let e = t.numbers("zz").unwrap_err().to_string();
        assert!(e.contains("no column 'zz'"), "{e}");
    }

    #[test]
    fn ragged_rows_are_an_error_not_a_panic() {
        let e = CsvTable::parse(Path::new("d/x.csv"), b"a,b\n1\n").unwrap_err();
        assert!(e.to_string().starts_with("cannot read 'd/x.csv'"), "{e}");
    }
}
