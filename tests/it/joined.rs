//! The attack battery once more, with every `git loop run` joined into a live session of
//! its loop (DESIGN 10): a joined command has exactly the confinement of a fresh one, so
//! every attack is refused the same way and every positive twin still works. The tests
//! are the same files; `TestEnv::battery` sees the `joined::` module path and routes `run`
//! through `up`, the joined run and `down`.

// The same files on purpose: each test runs twice, fresh and joined.
#![allow(clippy::duplicate_mod)]

#[path = "attacks_fifos.rs"]
mod attacks_fifos;
#[path = "attacks_files.rs"]
mod attacks_files;
#[path = "attacks_kernel.rs"]
mod attacks_kernel;
#[path = "attacks_policy.rs"]
mod attacks_policy;
