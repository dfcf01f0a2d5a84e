//! A guide's matchups (extension): create, PATCH, delete.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod update;
