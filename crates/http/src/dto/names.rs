//! The fixed words some request fields take, as enumerations for the OpenAPI document alone: the
//! handlers read these fields as strings and the domain's parsers decide (so a wrong word gets
//! the same 400 as before). Stated here, a client or a fuzzer generating from the document
//! sends words the server accepts instead of guessing them.

use utoipa::ToSchema;

/// A deck's or guide's visibility.
#[allow(dead_code)] // Documents the accepted words; never built.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum VisibilityName {
    Public,
    Unlisted,
    Private,
}

/// How hard a matchup is.
#[allow(dead_code)] // Documents the accepted words; never built.
#[derive(ToSchema)]
#[schema(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DifficultyName {
    VeryEasy,
    Easy,
    Medium,
    Hard,
    VeryHard,
}

/// Whether a matchup's special card comes in or goes out.
#[allow(dead_code)] // Documents the accepted words; never built.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum SpecialCardTypeName {
    In,
    Out,
}

/// The markup of a deck's strategy guide.
#[allow(dead_code)] // Documents the accepted words; never built.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum GuideContentTypeName {
    Markdown,
    Text,
}
