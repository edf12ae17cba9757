//! All integration tests, in one binary.

mod common;

mod attacks_files;
mod attacks_kernel;
mod bad_input;
mod cli;
mod concurrency;
mod config;
mod crash;
mod doctor;
mod egress;
mod gate;
mod host_trust;
mod import;
mod lifecycle;
mod publish;
mod recovery;
mod sandbox;
mod vault;
mod vault_delivery;
mod workspace;
