//! Code tables: compiler error codes and exception names mapped to
//! categories. A table rule captures a code and looks it up here; codes not
//! listed take the table's default.

use crate::category::Category::{self, *};

/// A lookup table used by a table rule.
pub struct CodeTable {
    /// The table's name, shown in the rule list.
    pub name: &'static str,
    /// Code → category, for the codes that differ from the default.
    pub entries: &'static [(&'static str, Category)],
    /// The category of codes not listed; `None` lets later rules decide.
    pub default: Option<Category>,
}

impl CodeTable {
    /// The category for `code`, if the table decides it.
    pub fn lookup(&self, code: &str) -> Option<Category> {
        self.entries
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, cat)| *cat)
            .or(self.default)
    }
}

/// rustc's `error[Exxxx]` codes.
pub const RUSTC: CodeTable = CodeTable {
    name: "rustc",
    default: Some(BuildFailure),
    entries: &[
        // Types and traits.
        ("E0308", TypeError),
        ("E0277", TypeError),
        ("E0282", TypeError),
        ("E0283", TypeError),
        ("E0369", TypeError),
        ("E0600", TypeError),
        ("E0604", TypeError),
        ("E0605", TypeError),
        ("E0606", TypeError),
        ("E0614", TypeError),
        ("E0631", TypeError),
        ("E0271", TypeError),
        ("E0053", TypeError),
        ("E0607", TypeError),
        ("E0620", TypeError),
        ("E0746", TypeError),
        // Names, methods, fields and arity: the API is not what the code assumes.
        ("E0425", ApiMismatch),
        ("E0599", ApiMismatch),
        ("E0609", ApiMismatch),
        ("E0560", ApiMismatch),
        ("E0061", ApiMismatch),
        ("E0060", ApiMismatch),
        ("E0050", ApiMismatch),
        ("E0107", ApiMismatch),
        ("E0412", ApiMismatch),
        ("E0422", ApiMismatch),
        ("E0423", ApiMismatch),
        ("E0424", ApiMismatch),
        ("E0426", ApiMismatch),
        ("E0531", ApiMismatch),
        ("E0532", ApiMismatch),
        ("E0574", ApiMismatch),
        ("E0603", ApiMismatch),
        ("E0624", ApiMismatch),
        ("E0615", ApiMismatch),
        ("E0616", ApiMismatch),
        ("E0618", ApiMismatch),
        ("E0026", ApiMismatch),
        ("E0027", ApiMismatch),
        ("E0063", ApiMismatch),
        ("E0046", ApiMismatch),
        ("E0407", ApiMismatch),
        ("E0432", ApiMismatch),
        ("E0437", ApiMismatch),
        ("E0438", ApiMismatch),
        ("E0405", ApiMismatch),
        ("E0404", ApiMismatch),
        ("E0433", MissingDependency),
        ("E0463", MissingDependency),
        ("E0583", NotFound),
        // Syntax.
        ("E0585", Syntax),
        ("E0586", Syntax),
        ("E0765", Syntax),
        ("E0766", Syntax),
        ("E0758", Syntax),
        ("E0670", Syntax),
    ],
};

/// TypeScript's `error TSxxxx` codes.
pub const TYPESCRIPT: CodeTable = CodeTable {
    name: "typescript",
    default: Some(TypeError),
    entries: &[
        ("TS2304", ApiMismatch),
        ("TS2339", ApiMismatch),
        ("TS2551", ApiMismatch),
        ("TS2552", ApiMismatch),
        ("TS2554", ApiMismatch),
        ("TS2555", ApiMismatch),
        ("TS2556", ApiMismatch),
        ("TS2557", ApiMismatch),
        ("TS2305", ApiMismatch),
        ("TS2614", ApiMismatch),
        ("TS2724", ApiMismatch),
        ("TS2353", ApiMismatch),
        ("TS2561", ApiMismatch),
        ("TS2576", ApiMismatch),
        ("TS2582", MissingDependency),
        ("TS2307", MissingDependency),
        ("TS2792", MissingDependency),
        ("TS7016", MissingDependency),
        ("TS2688", MissingDependency),
        ("TS5058", NotFound),
        ("TS6053", NotFound),
        ("TS18003", NotFound),
        ("TS5023", InvalidArguments),
        ("TS5025", InvalidArguments),
        ("TS6046", InvalidArguments),
        ("TS1002", Syntax),
        ("TS1003", Syntax),
        ("TS1005", Syntax),
        ("TS1009", Syntax),
        ("TS1010", Syntax),
        ("TS1011", Syntax),
        ("TS1109", Syntax),
        ("TS1110", Syntax),
        ("TS1126", Syntax),
        ("TS1127", Syntax),
        ("TS1128", Syntax),
        ("TS1131", Syntax),
        ("TS1134", Syntax),
        ("TS1135", Syntax),
        ("TS1136", Syntax),
        ("TS1138", Syntax),
        ("TS1144", Syntax),
        ("TS1160", Syntax),
        ("TS1161", Syntax),
        ("TS1434", Syntax),
        ("TS1435", Syntax),
        ("TS17002", Syntax),
    ],
};

/// mypy's `[error-code]` suffixes.
pub const MYPY: CodeTable = CodeTable {
    name: "mypy",
    default: Some(TypeError),
    entries: &[
        ("attr-defined", ApiMismatch),
        ("name-defined", ApiMismatch),
        ("call-arg", ApiMismatch),
        ("union-attr", TypeError),
        ("import", MissingDependency),
        ("import-not-found", MissingDependency),
        ("import-untyped", MissingDependency),
        ("syntax", Syntax),
    ],
};

/// Exception class names (Python, JavaScript and others), for the last
/// exception line of a traceback. Generic classes (`OSError`, `Exception`,
/// `RuntimeError`, …) are not listed: their message decides, through the text
/// rules, and a traceback with no telling message is `runtime`.
pub const EXCEPTIONS: CodeTable = CodeTable {
    name: "exception",
    default: None,
    entries: &[
        ("ModuleNotFoundError", MissingDependency),
        ("ImportError", ApiMismatch),
        ("AttributeError", ApiMismatch),
        ("NameError", ApiMismatch),
        ("UnboundLocalError", ApiMismatch),
        ("ReferenceError", ApiMismatch),
        ("NotImplementedError", Runtime),
        ("TypeError", TypeError),
        ("SyntaxError", Syntax),
        ("IndentationError", Syntax),
        ("TabError", Syntax),
        ("JSONDecodeError", Syntax),
        ("YAMLError", Syntax),
        ("ScannerError", Syntax),
        ("ParserError", Syntax),
        ("TomlDecodeError", Syntax),
        ("TOMLDecodeError", Syntax),
        ("FileNotFoundError", NotFound),
        ("NotADirectoryError", NotFound),
        ("IsADirectoryError", NotFound),
        ("PermissionError", Permission),
        ("TimeoutError", Timeout),
        ("TimeoutExpired", Timeout),
        ("ReadTimeout", Timeout),
        ("ConnectTimeout", Timeout),
        ("ReadTimeoutError", Timeout),
        ("ConnectionError", Network),
        ("ConnectionRefusedError", Network),
        ("ConnectionResetError", Network),
        ("ConnectionAbortedError", Network),
        ("BrokenPipeError", Runtime),
        ("URLError", Network),
        ("NewConnectionError", Network),
        ("MaxRetryError", Network),
        ("SSLError", Network),
        ("gaierror", Network),
        ("MemoryError", Resource),
        ("KeyboardInterrupt", Cancelled),
        ("AuthenticationError", Permission),
        ("PermissionDeniedError", Permission),
        ("RateLimitError", Resource),
        ("APIConnectionError", Network),
        ("APITimeoutError", Timeout),
        ("AssertionError", Runtime),
        ("RecursionError", Runtime),
        ("RangeError", Runtime),
        ("ValueError", Runtime),
        ("KeyError", Runtime),
        ("IndexError", Runtime),
        ("LookupError", Runtime),
        ("ZeroDivisionError", Runtime),
        ("ArithmeticError", Runtime),
        ("OverflowError", Runtime),
        ("StopIteration", Runtime),
        ("UnicodeDecodeError", Runtime),
        ("UnicodeEncodeError", Runtime),
        ("UnicodeError", Runtime),
        ("EOFError", Runtime),
        ("NullPointerException", Runtime),
        ("IllegalArgumentException", Runtime),
        ("IllegalStateException", Runtime),
        ("IndexOutOfBoundsException", Runtime),
        ("ArrayIndexOutOfBoundsException", Runtime),
        ("ClassCastException", TypeError),
        ("ClassNotFoundException", MissingDependency),
        ("NoClassDefFoundError", MissingDependency),
        ("NoSuchMethodError", ApiMismatch),
        ("OutOfMemoryError", Resource),
        ("StackOverflowError", Resource),
    ],
};
