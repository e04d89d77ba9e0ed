"""The notification filter language: the parser, its errors, and the F builder round-tripping through it."""
from __future__ import annotations

import pytest

from toolkit.http.filters import MAX_DEPTH, BoolOp, Condition, F, FilterSyntaxError, Not, parse, quote
from toolkit.sandbox.audience_platform import filter as sandbox
from toolkit.sandbox.exchange import Reject


def C(prop, op, value):
    return Condition(prop, op, value)


# --- conditions and operators ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "tree"), [
    ("read:true", C("read", ":", "true")),
    ("read!:true", C("read", "!:", "true")),
    ("count>5", C("count", ">", "5")),
    ("count>:5", C("count", ">:", "5")),
    ("severity:[low, info]", C("severity", ":", ("low", "info"))),
    ("severity!:[low,info ,debug]", C("severity", "!:", ("low", "info", "debug"))),
    ("severity:[ERROR]", C("severity", ":", ("ERROR",))),
    ('created>:"2026-11-01"', C("created", ">:", "2026-11-01")),
    ('message:""', C("message", ":", "")),
])
def test_conditions_and_operators(text, tree):
    assert parse(text) == tree


@pytest.mark.parametrize("text", ["  read:true  ", "read : true", "\tread:\ttrue\n", " read  :  true"])
def test_whitespace_around_property_operator_and_value(text):
    assert parse(text) == C("read", ":", "true")


def test_property_names_are_any_text_trimmed():
    assert parse("first name:Ada") == C("first name", ":", "Ada")
    assert parse("  properties.loyaltyTier :gold") == C("properties.loyaltyTier", ":", "gold")
    assert parse("NOTE:x") == C("NOTE", ":", "x")                 # a keyword prefix is still a name
    assert parse("ANDROID:x OR ORDER:y") == BoolOp("OR", (C("ANDROID", ":", "x"), C("ORDER", ":", "y")))


# --- AND, OR, NOT and parentheses ----------------------------------------------------------------------

def test_and_binds_tighter_than_or():
    assert parse("a:1 OR b:2 AND c:3") == BoolOp("OR", (C("a", ":", "1"), BoolOp("AND", (C("b", ":", "2"),
                                                                                       C("c", ":", "3")))))


def test_parentheses_group():
    assert parse("(a:1 OR b:2) AND c:3") == BoolOp("AND", (BoolOp("OR", (C("a", ":", "1"), C("b", ":", "2"))),
                                                        C("c", ":", "3")))
    assert parse("((a:1))") == C("a", ":", "1")
    assert parse("a:1 AND(b:2)") == BoolOp("AND", (C("a", ":", "1"), C("b", ":", "2")))


def test_chains_are_flat():
    assert parse("a:1 AND b:2 AND c:3") == BoolOp("AND", (C("a", ":", "1"), C("b", ":", "2"), C("c", ":", "3")))
    assert parse("a:1 OR b:2 OR c:3").operands == (C("a", ":", "1"), C("b", ":", "2"), C("c", ":", "3"))


def test_not():
    assert parse("NOT read:true") == Not(C("read", ":", "true"))
    assert parse("NOT NOT read:true") == Not(Not(C("read", ":", "true")))
    assert parse("NOT(a:1 OR b:2)") == Not(BoolOp("OR", (C("a", ":", "1"), C("b", ":", "2"))))
    assert parse("a:1 AND NOT b:2") == BoolOp("AND", (C("a", ":", "1"), Not(C("b", ":", "2"))))


def test_the_documents_example():
    text = 'type:alert AND NOT (severity:[low, info] OR read:true) AND created>:"2026-11-01"'
    assert parse(text) == BoolOp("AND", (
        C("type", ":", "alert"),
        Not(BoolOp("OR", (C("severity", ":", ("low", "info")), C("read", ":", "true")))),
        C("created", ">:", "2026-11-01"),
    ))


# --- quoting and escaping --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    (r'm:"say \"hi\""', 'say "hi"'),
    (r'm:"C:\\temp"', "C:\\temp"),
    (r'm:"ends with \\"', "ends with \\"),
    (r'm:"\\\""', '\\"'),
    ('m:"a, b) c] AND d"', "a, b) c] AND d"),
    ('m:"  spaced  "', "  spaced  "),
    (r'm:"\n stays"', "\\n stays"),                     # only \" and \\ are escapes
])
def test_quoted_values(text, value):
    assert parse(text) == C("m", ":", value)


def test_quoted_values_in_sets():
    assert parse(r'tag:["a,b", "c\"d", e]') == C("tag", ":", ("a,b", 'c"d', "e"))


@pytest.mark.parametrize(("text", "value"), [("a:x,", "x"), ("a:x)", "x"), ("a:x]", "x")])
def test_unquoted_values_end_at_delimiters(text, value):
    with pytest.raises(FilterSyntaxError):      # the delimiter is then left over
        parse(text)
    assert parse(f"({text[:-1]})") == C("a", ":", value)


# --- errors name where reading stopped ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "message", "position"), [
    ("read", "needs an operator", 0),
    ("a:1 AND", "needs an operator", 7),
    ("a:", "needs a value", 2),
    (":b", "needs a property name", 0),
    ("(a:1", "missing ')'", 4),
    ("a:1)", "unexpected ')'", 3),
    ("a:1 b:2", "unexpected 'b:2'", 4),
    ('a:"open', "unterminated quoted value", 2),
    ("a:[x,", "needs a value", 5),
    ("a:[x y]", "a set needs ',' or ']'", 5),
    ("a:[]", "needs a value", 3),
    ("a>[x]", "a set takes : or !:, not >", 1),
    ("a>:[x]", "a set takes : or !:, not >:", 1),
    ("(a:1) OR", "needs an operator", 8),
    ("", "needs an operator", 0),
])
def test_errors_with_positions(text, message, position):
    with pytest.raises(FilterSyntaxError) as info:
        parse(text)
    assert message in str(info.value)
    assert info.value.position == position
    assert str(info.value).endswith(f"at position {position}")
    assert isinstance(info.value, ValueError)


# --- the builder ------------------------------------------------------------------------------------------

def test_builder_text():
    assert str(F("type") == "alert") == 'type:"alert"'
    assert str(F("type") != "alert") == 'type!:"alert"'
    assert str(F("n") > 5) == 'n>"5"'
    assert str(F("n") >= 5) == 'n>:"5"'
    assert str(F("read").eq(True)) == 'read:"true"'
    assert str(F("read").ne(False)) == 'read!:"false"'
    assert str(F("s").isin(["low", "info"])) == 's:["low", "info"]'
    assert str(F("s").notin(["low"])) == 's!:["low"]'
    assert repr(F("a") == 1) == 'F<a:"1">'


def test_builder_combines():
    expr = (F("severity").isin(["low", "info"]) | ~F("read").eq(True)) & (F("created") >= "2026-11-01")
    assert parse(str(expr)) == BoolOp("AND", (
        BoolOp("OR", (C("severity", ":", ("low", "info")), Not(C("read", ":", "true")))),
        C("created", ">:", "2026-11-01"),
    ))


TRICKY = ['say "hi"', "C:\\temp\\", "\\", '"', "a, b) c] d", "x AND y", "NOT z", "(", "", "  padded  ",
          "tab\tand\nnewline", "ünïcödé ✓", 'a:b OR c:"d"', "\\\"", "]", "!:", ">:"]


@pytest.mark.parametrize("value", TRICKY)
@pytest.mark.parametrize(("build", "op"), [(lambda f, v: f == v, ":"), (lambda f, v: f != v, "!:"),
                                           (lambda f, v: f > v, ">"), (lambda f, v: f >= v, ">:")])
def test_builder_round_trips_tricky_scalars(value, build, op):
    assert parse(str(build(F("message"), value))) == C("message", op, value)


def test_builder_round_trips_tricky_sets():
    assert parse(str(F("tag").isin(TRICKY))) == C("tag", ":", tuple(TRICKY))
    assert parse(str(F("tag").notin(TRICKY[:3]))) == C("tag", "!:", tuple(TRICKY[:3]))


@pytest.mark.parametrize("prop", ["first name", "properties.tier", "ORDER", "ANDROID", "NOTE", "x ANDy", "or"])
def test_builder_round_trips_tricky_properties(prop):
    assert parse(str(F(prop) == "v")) == C(prop, ":", "v")
    assert parse(str((F(prop) == "v") & (F("b") == "w"))) == BoolOp("AND", (C(prop, ":", "v"), C("b", ":", "w")))


# a property holding the word AND, OR or NOT would read back as conditions joined or negated
@pytest.mark.parametrize("prop", ["", "  ", "a:b", "a!b", "a>b", "(a", "a]", 'a"b', "NOT x", "NOT\tx", "OR", "AND",
                                  "NOT", "x AND y", "x OR", "a NOT b"])
def test_builder_refuses_properties_it_cannot_write(prop):
    with pytest.raises(ValueError):
        F(prop)


def test_builder_refuses_empty_sets():
    with pytest.raises(ValueError, match="at least one value"):
        F("tag").isin([])
    with pytest.raises(ValueError, match="at least one value"):
        F("tag").notin(())


def test_quote():
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    assert quote(True) == '"true"' and quote(False) == '"false"' and quote(3) == '"3"'


# --- keywords are not property names; nesting is bounded (issue 18, item 8) ---------------------------------

@pytest.mark.parametrize(("text", "position"), [
    ("a:1 OR OR x:1", 7),            # was read as a property named "OR x"
    ("foo AND type:alert", 0),       # was read as a property named "foo AND type"
    ("a NOT b:1", 0),
    ("OR:1", 0),
    ("a:1 AND NOT:x", 8),
])
def test_a_keyword_inside_a_property_name_is_refused(text, position):
    with pytest.raises(FilterSyntaxError, match="not a property name") as info:
        parse(text)
    assert info.value.position == position


@pytest.mark.parametrize("text", ["(" * 3000 + "a:1" + ")" * 3000, "NOT " * 3000 + "a:1", "(NOT " * 1500 + "a:1" + ")" * 1500])
def test_deep_nesting_is_a_syntax_error_not_a_recursion_error(text):
    with pytest.raises(FilterSyntaxError, match=f"deeper than {MAX_DEPTH}"):
        parse(text)


def test_nesting_up_to_the_bound_is_read():
    assert parse("(" * MAX_DEPTH + "a:1" + ")" * MAX_DEPTH) == C("a", ":", "1")
    assert parse("NOT " * MAX_DEPTH + "a:1").operand is not None
    with pytest.raises(FilterSyntaxError):
        parse("(" * (MAX_DEPTH + 1) + "a:1" + ")" * (MAX_DEPTH + 1))


# --- the client and the sandbox read the language alike -----------------------------------------------------

AGREEMENT = [
    "read:true", "a:1 OR b:2 AND c:3", "NOT (a:1 OR b:2)", 'm:"say \\"hi\\""', "tag:[a, \"b,c\"]", "first name:Ada",
    "ANDROID:x OR NOTE:y", "(a:1)AND(b:2)", "a>:5", "a!:[x]",
    "a:1 OR OR x:1", "foo AND type:alert", "OR:1", "a NOT b:1", "read", "a:", ":b", "(a:1", "a:1)", "a:1 b:2",
    'a:"open', "a:[x,", "a:[]", "a>[x]", "a:1 AND", "AND", "NOT", "a:1 AND NOT", "(" * 33 + "a:1" + ")" * 33,
    "(" * 32 + "a:1" + ")" * 32, "NOT " * 33 + "a:1", "(" * 3000,
]


@pytest.mark.parametrize("text", AGREEMENT)
def test_client_and_sandbox_agree(text):
    try:
        parse(text)
        client_reads = True
    except FilterSyntaxError:
        client_reads = False
    try:
        sandbox.parse_filter(text)
        sandbox_reads = True
    except Reject:
        sandbox_reads = False
    assert client_reads == sandbox_reads
