//! Filling a block's struct literal by groups of fields that share a value.

/// `fill_fields! { Block { a: x, b: y } shared => [c, d] }` is the struct literal
/// `Block { a: x, b: y, c: shared, d: shared }`, with `shared` evaluated once per field.
///
/// Why: a RustHDL block holds every port, register, constant and local signal as its own
/// field, and `Constant` has no `Default`, so `..Default::default()` cannot fill the rest.
/// Naming the fields that share a value (ports and locals at `Default::default()`, rows of
/// registers at `rows(n)`) in one list keeps each constructor about a screen long, while the
/// compiler still rejects a missing, repeated or unknown field as in any struct literal.
/// The emitted Verilog depends only on the values, never on the order they are written in.
macro_rules! fill_fields {
    ($block:ident { $($field:ident: $value:expr),* $(,)? }
     $($shared:expr => [$($name:ident),* $(,)?])*) => {
        $block { $($field: $value,)* $($($name: $shared,)*)* }
    };
}
