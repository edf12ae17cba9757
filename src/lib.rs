//! git loop: every piece of agent work gets its own loop, a branch and working tree of the
//! code, per-loop branches of the team's notes, a vault and a sandbox. Everything is files
//! and git. `main.rs` parses and maps errors to exit codes; the work is done here.

pub mod agent;
pub mod autocommit;
pub mod checkout;
pub mod choice;
pub mod cli;
pub mod commands;
pub mod config;
pub mod confined;
pub mod create;
pub mod demo;
pub mod doctor;
pub mod egress;
pub mod error;
pub mod failpoint;
pub mod fanout;
pub mod fsutil;
pub mod gate;
pub mod git;
pub mod gitlocks;
pub mod guard;
pub mod hooks;
pub mod include;
pub mod init;
pub mod loops;
pub mod ports;
pub mod pr;
pub mod proposals;
pub mod publish;
pub mod rebase;
pub mod removal;
pub mod report;
pub mod repos;
pub mod review;
pub mod sandbox;
pub mod schedule;
pub mod session;
pub mod sync;
pub mod tempname;
pub mod terminal;
#[cfg(test)]
mod testutil;
pub mod toolchains;
pub mod ui;
pub mod values;
pub mod vault;
pub mod workspace;

pub use error::{Error, ErrorKind, Result};
