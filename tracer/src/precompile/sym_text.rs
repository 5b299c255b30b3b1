//! Reads back a size expression written as `SymExpr`'s text (`s0*s1*64 + 3`, `(s0 // 2)`,
//! `((s0 + 1) % 4)`), the form a precompiled graph keeps its symbolic sizes in. The text is
//! the canonical rendering, so rebuilding it with `SymExpr`'s own arithmetic gives back an
//! equal expression.

use fx::{FloatExpr, FloatOp, IntRound, SymExpr};

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        while self.s.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip();
        if self.s[self.at..].starts_with(tok.as_bytes()) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Option<i64> {
        self.skip();
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()
    }

    fn expr(&mut self) -> Option<SymExpr> {
        let neg = self.eat("-");
        let mut e = self.term()?;
        if neg {
            e = e.mul(&SymExpr::constant(-1));
        }
        loop {
            if self.eat("+") {
                e = e.add(&self.term()?);
            } else if self.eat("-") {
                e = e.add(&self.term()?.mul(&SymExpr::constant(-1)));
            } else {
                return Some(e);
            }
        }
    }

    fn term(&mut self) -> Option<SymExpr> {
        let mut e = self.factor()?;
        while self.eat("*") {
            e = e.mul(&self.factor()?);
        }
        Some(e)
    }

    fn factor(&mut self) -> Option<SymExpr> {
        if self.eat("(") {
            let a = self.expr()?;
            let e = if self.eat("//") {
                a.floordiv(&self.expr()?)
            } else if self.eat("%") {
                a.modulo(&self.expr()?)
            } else {
                a
            };
            return self.eat(")").then_some(e);
        }
        for (f, is_max) in [("max(", true), ("min(", false)] {
            if self.eat(f) {
                let a = self.expr()?;
                if !self.eat(",") {
                    return None;
                }
                let b = self.expr()?;
                let e = if is_max {
                    a.max_with(&b, &|_| i64::MIN)
                } else {
                    a.min_with(&b, &|_| i64::MIN)
                };
                return self.eat(")").then_some(e);
            }
        }
        for (f, how) in [
            ("round(", IntRound::Round),
            ("__import__('math').floor(", IntRound::Floor),
            ("__import__('math').ceil(", IntRound::Ceil),
            ("__import__('math').trunc(", IntRound::Trunc),
        ] {
            if self.eat(f) {
                let x = self.float()?;
                return self.eat(")").then(|| SymExpr::of_float(how, x));
            }
        }
        if self.eat("s") {
            return Some(SymExpr::symbol(u32::try_from(self.number()?).ok()?));
        }
        self.number().map(SymExpr::constant)
    }

    /// A float in `FloatExpr`'s Python form, inside a rounding atom (`round((float(s0) /
    /// 2.0))`): `float(e)`, a literal, `(a op b)`, `(-a)`, `max(a, b)`, `min(a, b)`,
    /// `abs(a)`, `__import__('math').sqrt(a)`.
    fn float(&mut self) -> Option<FloatExpr> {
        if self.eat("float(") {
            let f = if self.eat("'") {
                let v = match () {
                    _ if self.eat("inf'") => f64::INFINITY,
                    _ if self.eat("-inf'") => f64::NEG_INFINITY,
                    _ if self.eat("nan'") => f64::NAN,
                    _ => return None,
                };
                FloatExpr::Const(v)
            } else {
                FloatExpr::of_int(self.expr()?)
            };
            return self.eat(")").then_some(f);
        }
        for (f, op) in [("max(", FloatOp::Max), ("min(", FloatOp::Min)] {
            if self.eat(f) {
                let a = self.float()?;
                if !self.eat(",") {
                    return None;
                }
                let b = self.float()?;
                return self.eat(")").then(|| FloatExpr::binary(op, a, b));
            }
        }
        for f in ["abs(", "__import__('math').sqrt("] {
            if self.eat(f) {
                let a = self.float()?;
                let r = if f == "abs(" {
                    FloatExpr::abs(a)
                } else {
                    FloatExpr::sqrt(a)
                };
                return self.eat(")").then_some(r);
            }
        }
        if self.eat("(") {
            self.skip();
            let literal = self.s.get(self.at) == Some(&b'-')
                && self.s.get(self.at + 1).is_some_and(u8::is_ascii_digit);
            if !literal && self.eat("-") {
                let a = self.float()?;
                return self.eat(")").then(|| FloatExpr::negated(a));
            }
            let a = self.float()?;
            // Longest first: `**` before `*`, `//` before `/`.
            let ops = [
                ("**", FloatOp::Pow),
                ("//", FloatOp::FloorDiv),
                ("+", FloatOp::Add),
                ("-", FloatOp::Sub),
                ("*", FloatOp::Mul),
                ("/", FloatOp::Div),
                ("%", FloatOp::Mod),
            ];
            let op = ops.iter().find(|(t, _)| self.eat(t))?.1;
            let b = self.float()?;
            return self.eat(")").then(|| FloatExpr::binary(op, a, b));
        }
        self.literal().map(FloatExpr::Const)
    }

    /// A float literal as Rust's `{:?}` prints it (`2.0`, `-0.5`, `1e-7`).
    fn literal(&mut self) -> Option<f64> {
        self.skip();
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'-' | b'+'))
        {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()
    }
}

/// The expression `text` renders, or `None` if it is not one.
pub fn parse(text: &str) -> Option<SymExpr> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    let e = p.expr()?;
    p.skip();
    (p.at == text.len()).then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: u32) -> SymExpr {
        SymExpr::symbol(k)
    }

    #[test]
    fn rendered_expressions_read_back_equal() {
        let two = SymExpr::constant(2);
        let cases = [
            s(0),
            s(0).mul(&s(1)).mul_const(64).add_const(3),
            s(0).add_const(-1),
            s(0).mul_const(-2).add(&s(1)),
            s(0).add_const(1).floordiv(&two),
            s(0).modulo(&SymExpr::constant(4)).mul(&s(1)),
            s(0).mul(&s(1)).floordiv(&s(1).add_const(1)).add_const(-7),
            SymExpr::constant(5),
            s(0).add_const(-10)
                .max_with(&SymExpr::constant(0), &|_| 2)
                .mul_const(3),
            s(0).min_with(&SymExpr::constant(12), &|_| 2).add(&s(1)),
        ];
        for e in cases {
            let text = e.to_string();
            assert_eq!(parse(&text), Some(e.clone()), "{text}");
        }
        assert_eq!(parse("s0 +"), None);
        assert_eq!(parse("x0"), None);
    }

    /// A float's rounding (session 34) reads back: every float operation, a negative
    /// literal, a negation, an int expression inside `float(...)`.
    #[test]
    fn roundings_of_floats_read_back_equal() {
        let f = |k| FloatExpr::of_int(s(k));
        let c = FloatExpr::Const;
        let half = FloatExpr::binary(FloatOp::Div, f(0), c(2.0));
        let floats = [
            half.clone(),
            FloatExpr::binary(FloatOp::FloorDiv, half.clone(), c(1.0)),
            FloatExpr::binary(FloatOp::Mod, f(1), c(-1.5)),
            FloatExpr::binary(FloatOp::Max, half.clone(), c(3.0)),
            FloatExpr::binary(FloatOp::Min, FloatExpr::sqrt(f(0)), c(1e-7)),
            FloatExpr::abs(FloatExpr::binary(FloatOp::Sub, c(-0.5), half.clone())),
            FloatExpr::negated(FloatExpr::binary(FloatOp::Pow, f(0), c(0.5))),
            FloatExpr::of_int(s(0).add(&s(1)).floordiv(&SymExpr::constant(3))),
        ];
        for (i, x) in floats.into_iter().enumerate() {
            let how = [
                IntRound::Round,
                IntRound::Floor,
                IntRound::Ceil,
                IntRound::Trunc,
            ][i % 4];
            let e = SymExpr::of_float(how, x).add(&s(1)).mul_const(2);
            let text = e.to_string();
            assert_eq!(parse(&text), Some(e.clone()), "{text}");
        }
    }
}
