//! Git, in two halves.
//!
//! - [`objects`] reads repositories and copies objects and refs with gix, executing
//!   nothing a repository configures. Everything the host does with a loop's repository
//!   (which the agent controls) goes through it, and it reads a loop's repository through
//!   [`untrusted`]: confined, non-blocking and bounded reads, never gix's repository
//!   machinery.
//! - [`cmd`] is the one place that starts `git`, for work in repositories the user
//!   trusts (their own repository, the workspace's origins) and in a loop's repository
//!   only while `git-loop` is creating it, before any agent has touched it.

pub mod cmd;
pub mod objects;
pub mod untrusted;
