//! Letters of other scripts drawn like a Latin letter: the lint's
//! confusable tool names and the tool rules' name forms read them as the
//! Latin letter.

/// Cyrillic letters and the Latin ones they look like.
const CYRILLIC: &[(char, char)] = &[
    ('а', 'a'),
    ('е', 'e'),
    ('ё', 'e'),
    ('һ', 'h'),
    ('і', 'i'),
    ('ї', 'i'),
    ('ј', 'j'),
    ('ӏ', 'l'),
    ('о', 'o'),
    ('р', 'p'),
    ('с', 'c'),
    ('ѕ', 's'),
    ('у', 'y'),
    ('х', 'x'),
    ('ԁ', 'd'),
    ('ԛ', 'q'),
    ('ԝ', 'w'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('Н', 'H'),
    ('І', 'I'),
    ('Ј', 'J'),
    ('К', 'K'),
    ('М', 'M'),
    ('О', 'O'),
    ('Р', 'P'),
    ('С', 'C'),
    ('Ѕ', 'S'),
    ('Т', 'T'),
    ('Х', 'X'),
    ('У', 'Y'),
    ('Ԁ', 'D'),
    ('Ԛ', 'Q'),
    ('Ԝ', 'W'),
];
/// Greek letters and the Latin ones they look like.
const GREEK: &[(char, char)] = &[
    ('α', 'a'),
    ('ε', 'e'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ν', 'v'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('υ', 'u'),
    ('χ', 'x'),
    ('γ', 'y'),
    ('ϲ', 'c'),
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
];
/// Other look-alikes, with their script.
const OTHER: &[(char, char, &str)] = &[
    ('ı', 'i', "Latin dotless i"),
    ('ȷ', 'j', "Latin dotless j"),
    ('ℓ', 'l', "letterlike"),
    ('օ', 'o', "Armenian"),
    ('ս', 'u', "Armenian"),
    ('ց', 'g', "Armenian"),
    ('ɑ', 'a', "Latin alpha"),
    ('ɡ', 'g', "Latin script g"),
];

/// The Latin letter `c` looks like, and `c`'s script; `None` for Latin
/// letters and everything that looks like no Latin letter.
pub(crate) fn lookalike(c: char) -> Option<(char, &'static str)> {
    if c.is_ascii() {
        return None;
    }
    if let Some((_, l)) = CYRILLIC.iter().find(|(k, _)| *k == c) {
        return Some((*l, "Cyrillic"));
    }
    if let Some((_, l)) = GREEK.iter().find(|(k, _)| *k == c) {
        return Some((*l, "Greek"));
    }
    if let Some((_, l, s)) = OTHER.iter().find(|(k, _, _)| *k == c) {
        return Some((*l, s));
    }
    // Fullwidth ASCII (`ａ` U+FF41): what NFKC folds to ASCII.
    let u = c as u32;
    if (0xFF01..=0xFF5E).contains(&u) {
        let l = char::from_u32(u - 0xFEE0)?;
        return l.is_ascii_alphanumeric().then_some((l, "fullwidth"));
    }
    None
}
