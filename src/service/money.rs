//! Exact amounts of money (design §20): a decimal read from text, never
//! through a float, kept as a whole number of the currency's minor units
//! (cents for USD, yen for JPY, fils for KWD) with its ISO 4217 code.
//! Totals are per currency; nothing here converts between currencies.

use iso_currency::Currency;
use rust_decimal::Decimal;
use serde_json::Value;

use crate::error::{AppError, AppResult};

/// The largest amount kept, in minor units: 2^53, so every amount is also
/// exact as a JSON number for clients that read numbers as doubles.
pub const MAX_MINOR: i64 = 1 << 53;

/// An amount in a currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Money {
    pub minor: i64,
    pub currency: String,
}

/// An ISO 4217 code that has minor units (not a metal or a fund unit),
/// upper-cased, with its exponent; refused as `field` otherwise.
pub fn currency(field: &str, code: &str) -> AppResult<(String, u32)> {
    let code = code.trim().to_ascii_uppercase();
    let exponent = Currency::from_code(&code).and_then(|currency| currency.exponent());
    match exponent {
        Some(exponent) => Ok((code, u32::from(exponent))),
        None => Err(AppError::validation(field, "must be an ISO 4217 currency code such as USD or EUR")),
    }
}

/// The exponent of a stored (so already checked) code; 2 if it is unknown.
pub fn exponent(code: &str) -> u32 {
    Currency::from_code(code).and_then(|currency| currency.exponent()).map_or(2, u32::from)
}

/// Reads `amount` (a JSON string or number: `"19.99"`, `19.99`, `1200`) in
/// `code`. Refused, beside the field at fault, when it is not a decimal, is
/// negative, has more decimals than the currency has minor units, or is
/// more than `MAX_MINOR` minor units.
pub fn parse(amount_field: &str, currency_field: &str, amount: &Value, code: &str) -> AppResult<Money> {
    let (currency, exponent) = currency(currency_field, code)?;
    let not_a_number = || AppError::validation(amount_field, "must be a decimal number such as 19.99");
    let text = match amount {
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        _ => return Err(not_a_number()),
    };
    let parsed =
        Decimal::from_str_exact(&text).or_else(|_| Decimal::from_scientific(&text)).map_err(|_| not_a_number())?;
    if parsed.is_sign_negative() && !parsed.is_zero() {
        return Err(AppError::validation(amount_field, "must not be negative"));
    }
    let mut exact = parsed.normalize();
    if exact.scale() > exponent {
        return Err(AppError::validation(amount_field, format!("has more decimals than {currency} has ({exponent})")));
    }
    exact.rescale(exponent);
    let minor = i64::try_from(exact.mantissa()).ok().filter(|minor| (0..=MAX_MINOR).contains(minor));
    let minor = minor.ok_or_else(|| {
        AppError::validation(amount_field, format!("must be at most {MAX_MINOR} minor units of {currency}"))
    })?;
    Ok(Money { minor, currency })
}

/// Minor units as the exact decimal text: `1234.50` for 123450 USD cents.
pub fn decimal_text(minor: i64, code: &str) -> String {
    Decimal::new(minor, exponent(code)).to_string()
}

/// Minor units as a JSON number in major units (`1234.5`); exact for every
/// amount up to `MAX_MINOR`, as its shortest decimal form.
pub fn major(minor: i64, code: &str) -> f64 {
    decimal_text(minor, code).parse().unwrap_or_default()
}

/// `1,234.50 USD`: grouped thousands, every minor digit, the code.
pub fn long(minor: i64, code: &str) -> String {
    let text = decimal_text(minor, code);
    let (whole, fraction) = text.split_once('.').map_or((text.as_str(), None), |(w, f)| (w, Some(f)));
    let digits: Vec<char> = whole.chars().collect();
    let mut grouped = String::new();
    for (at, digit) in digits.iter().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(*digit);
    }
    match fraction {
        Some(fraction) => format!("{grouped}.{fraction} {code}"),
        None => format!("{grouped} {code}"),
    }
}

/// `1.2K USD`: one decimal past a thousand, for tiles.
pub fn short(minor: i64, code: &str) -> String {
    let value = major(minor, code);
    let (scaled, unit) = match value {
        v if v >= 1e9 => (v / 1e9, "B"),
        v if v >= 1e6 => (v / 1e6, "M"),
        v if v >= 1e3 => (v / 1e3, "K"),
        v => return format!("{} {code}", (v * 100.0).round() / 100.0),
    };
    let rounded = (scaled * 10.0).round() / 10.0;
    format!("{rounded}{unit} {code}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn amounts_are_read_exactly_in_minor_units() {
        // (amount, currency, minor units and code or the field refused)
        type Case = (Value, &'static str, Result<(i64, &'static str), &'static str>);
        let table: [Case; 16] = [
            (json!("19.99"), "USD", Ok((1999, "USD"))),
            (json!(19.99), "usd", Ok((1999, "USD"))),
            (json!("0.1"), "EUR", Ok((10, "EUR"))),
            (json!(1200), "JPY", Ok((1200, "JPY"))),
            (json!("1.5"), "JPY", Err("amount")),
            (json!("2.125"), "KWD", Ok((2125, "KWD"))),
            (json!("19.990"), "USD", Ok((1999, "USD"))),
            (json!("0"), "USD", Ok((0, "USD"))),
            (json!("-5"), "USD", Err("amount")),
            (json!("ten"), "USD", Err("amount")),
            (json!(true), "USD", Err("amount")),
            (json!("1e2"), "USD", Ok((10000, "USD"))),
            (json!("90071992547409.92"), "USD", Ok((MAX_MINOR, "USD"))),
            (json!("90071992547409.93"), "USD", Err("amount")),
            (json!("5"), "XYZ", Err("currency")),
            (json!("5"), "XAU", Err("currency")),
        ];
        for (amount, code, expected) in table {
            match (parse("amount", "currency", &amount, code), expected) {
                (Ok(money), Ok((minor, currency))) => {
                    assert_eq!((money.minor, money.currency.as_str()), (minor, currency), "{amount} {code}")
                }
                (Err(err), Err(field)) => assert_eq!(err.field.as_deref(), Some(field), "{amount} {code}"),
                (got, want) => panic!("{amount} {code}: {got:?} but expected {want:?}"),
            }
        }
    }

    #[test]
    fn amounts_are_shown_exactly() {
        assert_eq!(decimal_text(123450, "USD"), "1234.50");
        assert_eq!(decimal_text(1200, "JPY"), "1200");
        assert_eq!(decimal_text(2125, "KWD"), "2.125");
        assert_eq!(major(123450, "USD"), 1234.5);
        assert_eq!(long(123456789, "USD"), "1,234,567.89 USD");
        assert_eq!(long(999, "JPY"), "999 JPY");
        assert_eq!(short(123456, "EUR"), "1.2K EUR");
        assert_eq!(short(1999, "USD"), "19.99 USD");
    }
}
