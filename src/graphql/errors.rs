//! The error boundary of the GraphQL face: every error a client receives
//! carries an `extensions.code` from the vocabulary, and an error that did not
//! come from `AppError` shows no internal text (`error::classify_graphql_error`).
//! The `limits` extension applies it to every answer.

use async_graphql::Response;

use crate::error::classify_graphql_error;

/// The response with a code on every error.
pub fn with_codes(mut response: Response) -> Response {
    response.errors.iter_mut().for_each(classify_graphql_error);
    response
}
