//! Temporary stand-in until the logos lexer lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment { pub text: String, pub words: Vec<String>, pub opaque: Option<Opaque> }
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opaque { CommandSubstitution }
impl Opaque { pub fn describe(&self) -> &'static str { "command substitution `$(...)`" } }
pub fn split(command: &str) -> Vec<Segment> {
    command.split(';').filter(|s| !s.trim().is_empty()).map(|s| Segment { text: s.trim().into(), words: s.split_whitespace().map(Into::into).collect(), opaque: if s.contains("$(") { Some(Opaque::CommandSubstitution) } else { None } }).collect()
}
