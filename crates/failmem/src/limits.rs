//! Every size limit of the engine, in one place. The README's "Limits"
//! table lists the same numbers.

/// Default bytes of tool output kept (head and tail, marker between).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Smallest allowed `max-output-bytes`.
pub const MIN_OUTPUT_BYTES: usize = 1024;
/// Largest allowed `max-output-bytes`.
pub const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;
/// Share of the kept output taken from the head; the rest comes from the tail,
/// where summaries and tracebacks end.
pub const OUTPUT_HEAD_PERCENT: usize = 25;

/// Bytes of a failure's canonical args kept in its record.
pub const MAX_RECORD_ARGS_BYTES: usize = 1024;
/// Bytes of args text that are parsed as JSON; longer args are kept as text.
pub const MAX_ARGS_PARSE_BYTES: usize = 256 * 1024;
/// Bytes of a tool name kept.
pub const MAX_TOOL_NAME_BYTES: usize = 128;
/// Characters in a failure description.
pub const MAX_DESCRIPTION_CHARS: usize = 80;
/// Bytes of the message a fingerprint is computed from.
pub const MAX_FINGERPRINT_SOURCE_BYTES: usize = 512;
/// Bytes of a path kept in the ledger.
pub const MAX_PATH_BYTES: usize = 1024;

/// Entries kept in each ledger list; the oldest are dropped beyond it.
pub const MAX_LEDGER_ENTRIES: usize = 2000;
/// The longest cycle of calls the loop detector looks for.
pub const MAX_CYCLE_PERIOD: usize = 20;
/// Outcomes the no-progress detector looks back over, by default.
pub const NOVELTY_WINDOW: usize = 20;
/// The largest allowed `novelty-window`.
pub const MAX_NOVELTY_WINDOW: usize = 100;
/// Distinct outcomes the no-progress detector remembers; the oldest go first.
pub const NOVELTY_MEMORY: usize = 1024;
/// Recent failures remembered by the pattern detector.
pub const FAILURE_HISTORY: usize = 10;

/// Largest allowed `max-failures`.
pub const MAX_TRACKED_FAILURES: u32 = 1000;
/// Host rules allowed in a config.
pub const MAX_HOST_RULES: usize = 100;
/// Bytes of a host rule's pattern.
pub const MAX_RULE_PATTERN_BYTES: usize = 1024;
/// Host templates allowed in a config.
pub const MAX_HOST_TEMPLATES: usize = 32;
/// Bytes of a host template's source.
pub const MAX_TEMPLATE_SOURCE_BYTES: usize = 64 * 1024;
/// Names in `available-tools` or `exempt-tools`.
pub const MAX_TOOL_LIST: usize = 512;
/// Names in `bookkeeping-fields`.
pub const MAX_BOOKKEEPING_FIELDS: usize = 64;
/// Bytes of a field name in `bookkeeping-fields`.
pub const MAX_FIELD_NAME_BYTES: usize = 128;

/// Bytes of rendered output a template may produce before it is stopped.
pub const MAX_RENDER_BYTES: usize = 256 * 1024;
/// minijinja fuel (instructions) for one render.
pub const RENDER_FUEL: u64 = 200_000;
/// Smallest allowed token budget.
pub const MIN_TOKEN_BUDGET: u32 = 50;
/// Largest allowed token budget.
pub const MAX_TOKEN_BUDGET: u32 = 100_000;

/// Bytes of output the learned layer reads: beyond this, the first half and
/// the last half (`classify::learned::features`).
pub const LEARNED_OUTPUT_BYTES: usize = 64 * 1024;
/// Error-ish lines the learned layer reads (each with the line after it).
pub const LEARNED_ERROR_LINES: usize = 12;
/// Last lines the learned layer reads.
pub const LEARNED_LAST_LINES: usize = 3;
/// Characters of a line, of the tool name and of the args the learned
/// layer reads.
pub const LEARNED_LINE_CHARS: usize = 400;
/// Words of a line (or of the tool name) the learned layer reads.
pub const LEARNED_WORDS_PER_LINE: usize = 40;
/// Words of the args the learned layer reads.
pub const LEARNED_ARGS_WORDS: usize = 16;
/// Features an explanation lists.
pub const EXPLAIN_FEATURES: usize = 8;

/// Bytes of a snapshot accepted by `restore`.
pub const MAX_SNAPSHOT_BYTES: usize = 16 * 1024 * 1024;

// The project memory.

/// Bytes of a task id.
pub const MAX_TASK_ID_BYTES: usize = 128;
/// Characters of a task summary.
pub const MAX_SUMMARY_CHARS: usize = 300;
/// Approaches kept per attempt.
pub const MAX_APPROACHES: usize = 16;
/// Bytes of one approach.
pub const MAX_APPROACH_BYTES: usize = 256;
/// Files (and fingerprints) kept per attempt.
pub const MAX_ATTEMPT_FILES: usize = 64;
/// Bytes of a failure reason or a lesson.
pub const MAX_REASON_BYTES: usize = 512;
/// Bytes of an attempt's error output.
pub const MAX_ERROR_OUTPUT_BYTES: usize = 2048;
/// Attempts a store keeps; the oldest go first.
pub const MAX_ATTEMPTS: usize = 2000;
/// Learnings a store keeps; the least recently seen go first.
pub const MAX_LEARNINGS: usize = 1000;
/// Bytes of an export accepted by `import`.
pub const MAX_EXPORT_BYTES: usize = 32 * 1024 * 1024;

// Trajectory import.

/// Top-level keys of a trajectory's first object read to detect its format.
pub const MAX_SNIFF_KEYS: usize = 64;
