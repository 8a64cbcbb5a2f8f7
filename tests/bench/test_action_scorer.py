"""ACTION scorer (Appendix B.4): matching rules, efficiency formulas and the per-golden detail."""

import pytest

from bench.scoring.action import (
    ArgProblem,
    CandidateCheck,
    GoldenCall,
    GoldenMatch,
    PredictedCall,
    Problem,
    score_action,
)
from mcp_gateway.catalog import load_catalog

FILL_TANK = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"],
             "additionalProperties": False}
SCHEMAS = {
    "fillTank": FILL_TANK,
    "search": {"type": "object", "properties": {
        "query": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
        "exact": {"type": "boolean"}, "codes": {"type": "array", "items": {"type": "string"}},
        "filters": {"type": "object", "properties": {"year": {"type": "integer"}}},
        "region": {"type": ["string", "null"]},
    }, "required": ["query"]},
    "lookup": {"type": "object", "properties": {}},
    "price": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
}
FILL_20 = GoldenCall("fillTank", {"amount": 20}, value_compare_args=("amount",), step=0)


def fill(amount):
    return PredictedCall("fillTank", {"amount": amount})


# --- the paper's fillTank examples (B.4), numbers worked out from Eq. 3 -------------------------

def test_golden_call_plus_an_extra_call_is_correct_but_less_efficient():
    # Ntotal=2, Ndup=0, Nopt=1: CR = 1 - 0/2 = 1, MPC = 1/2, Eff = (1 + 0.5)/2 = 0.75, ACTION = (1 + 0.75)/2
    score = score_action([FILL_20], [fill(20), fill(10)], SCHEMAS, max_allowed_calls=4)
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (1.0, 1.0, 0.5, 0.75, 0.875)
    assert (score.n_total, score.n_dup, score.n_opt) == (2, 0, 1)
    assert score.matches[0].matched_index == 0


def test_two_half_fills_reach_the_state_but_score_no_correctness_and_count_a_duplicate():
    # Corr 0 (amount 10 != 20); Ndup=1 of Ntotal=2: CR = 0.5, MPC = 1/2, Eff = 0.5, ACTION = (0 + 0.5)/2
    score = score_action([FILL_20], [fill(10), fill(10)], SCHEMAS, max_allowed_calls=4)
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (0.0, 0.5, 0.5, 0.5, 0.25)
    assert score.n_dup == 1
    wrong = (ArgProblem(Problem.WRONG_VALUE, "amount", "got 10, expected 20"),)
    assert score.matches == (GoldenMatch(0, 0, "fillTank", None, (CandidateCheck(0, wrong), CandidateCheck(1, wrong))),)
    assert score.matches[0].reason == "closest call #0: wrong_value 'amount': got 10, expected 20"


def test_the_golden_trajectory_alone_scores_one():
    score = score_action([FILL_20], [fill(20)], SCHEMAS, max_allowed_calls=1)
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_efficiency_is_zero_past_the_budget_and_kept_at_the_budget():
    at_budget = score_action([FILL_20], [fill(20), fill(10)], SCHEMAS, max_allowed_calls=2)
    over = score_action([FILL_20], [fill(20), fill(10)], SCHEMAS, max_allowed_calls=1)
    assert (at_budget.eff, at_budget.over_budget) == (0.75, False)
    assert (over.corr, over.cr, over.mpc, over.eff, over.action, over.over_budget) == (1.0, 1.0, 0.5, 0.0, 0.5, True)


# --- matching rules ------------------------------------------------------------------------

def test_an_unexpected_parameter_prevents_the_match():
    score = score_action([FILL_20], [PredictedCall("fillTank", {"amount": 20, "fuel": "diesel"})], SCHEMAS, 3)
    assert score.corr == 0.0
    assert score.matches[0].candidates == (
        CandidateCheck(0, (ArgProblem(Problem.UNEXPECTED_PARAM, "fuel", "not in the tool's schema"),)),)


def test_a_missing_required_parameter_prevents_the_match_and_is_reported_once():
    score = score_action([FILL_20], [PredictedCall("fillTank", {})], SCHEMAS, 3)
    assert score.corr == 0.0
    assert score.matches[0].reason == "closest call #0: missing_param 'amount': required by the schema"


def test_an_optional_parameter_the_golden_action_left_out_is_allowed():
    golden = GoldenCall("search", {"query": "서울"}, value_compare_args=("query",))
    score = score_action([golden], [PredictedCall("search", {"query": "서울", "pageNo": 3})], SCHEMAS, 3)
    assert score.corr == 1.0


def test_only_value_compare_args_are_compared_by_value():
    golden = GoldenCall("search", {"query": "서울", "pageNo": 1}, value_compare_args=("query",))
    other_page = score_action([golden], [PredictedCall("search", {"query": "서울", "pageNo": 2})], SCHEMAS, 3)
    other_query = score_action([golden], [PredictedCall("search", {"query": "부산", "pageNo": 1})], SCHEMAS, 3)
    assert other_page.corr == 1.0
    assert other_query.corr == 0.0
    assert other_query.matches[0].candidates[0].problems == (
        ArgProblem(Problem.WRONG_VALUE, "query", "got '부산', expected '서울'"),)


def test_a_compared_optional_argument_that_was_not_sent_is_missing():
    golden = GoldenCall("search", {"query": "x", "pageNo": 2}, value_compare_args=("pageNo",))
    score = score_action([golden], [PredictedCall("search", {"query": "x"})], SCHEMAS, 3)
    assert score.matches[0].candidates[0].problems == (
        ArgProblem(Problem.MISSING_PARAM, "pageNo", "compared by value but not sent"),)


@pytest.mark.parametrize("sent, expected", [
    ("Middle School", "middle-school"),  # BFCL: case, spaces and ,./-_*^ do not count
    ("2021-01-01", "20210101"),
    ("중학교 ", "중학교"),
    ("it's", 'it"s'),
])
def test_strings_compare_after_bfcl_standardization(sent, expected):
    golden = GoldenCall("search", {"query": expected}, value_compare_args=("query",))
    assert score_action([golden], [PredictedCall("search", {"query": sent})], SCHEMAS, 3).corr == 1.0


def test_standardization_does_not_erase_real_differences():
    golden = GoldenCall("search", {"query": "중학교", "codes": ["A1", "B2"]}, value_compare_args=("query", "codes"))
    wrong = PredictedCall("search", {"query": "고등학교", "codes": ["B2", "A1"]})  # list order counts, as in BFCL
    problems = score_action([golden], [wrong], SCHEMAS, 3).matches[0].candidates[0].problems
    assert [(p.kind, p.param) for p in problems] == [(Problem.WRONG_VALUE, "query"), (Problem.WRONG_VALUE, "codes")]


def test_lists_and_dicts_compare_with_standardized_strings_inside():
    golden = GoldenCall("search", {"query": "q", "codes": ["Seoul-Si"], "filters": {"year": 2021}},
                        value_compare_args=("codes", "filters"))
    call = PredictedCall("search", {"query": "q", "codes": ["seoul si"], "filters": {"year": 2021}})
    assert score_action([golden], [call], SCHEMAS, 3).corr == 1.0


@pytest.mark.parametrize("param, value", [
    ("pageNo", True),      # bool is not an integer
    ("pageNo", 2.0),       # nor is a float, even an integral one
    ("pageNo", "2"),       # nor a numeric string
    ("ratio", "0.5"),
    ("exact", 1),          # an int is not a boolean
    ("query", 7),
    ("codes", "A1"),
    ("codes", ["A1", 2]),  # array items are checked
    ("filters", {"year": "2021"}),  # object properties are checked
    ("filters", ["year"]),
])
def test_values_of_the_wrong_json_type_are_rejected(param, value):
    golden = GoldenCall("search", {"query": "q"})
    args = {"query": "q", param: value} if param != "query" else {"query": value}
    score = score_action([golden], [PredictedCall("search", args)], SCHEMAS, 3)
    assert score.corr == 0.0
    [problem] = score.matches[0].candidates[0].problems
    assert (problem.kind, problem.param) == (Problem.WRONG_TYPE, param)


@pytest.mark.parametrize("param, value", [
    ("ratio", 1),       # ints are acceptable numbers
    ("ratio", 0.25),
    ("pageNo", -3),
    ("exact", False),
    ("codes", []),
    ("region", None),   # a list of types takes any of them
    ("region", "강남구"),
])
def test_values_of_the_right_json_type_are_accepted(param, value):
    golden = GoldenCall("search", {"query": "q"})
    assert score_action([golden], [PredictedCall("search", {"query": "q", param: value})], SCHEMAS, 3).corr == 1.0


def test_numbers_compare_by_value_but_bools_never_equal_numbers():
    int_golden = GoldenCall("search", {"query": "q", "ratio": 20}, value_compare_args=("ratio",))
    assert score_action([int_golden], [PredictedCall("search", {"query": "q", "ratio": 20.0})], SCHEMAS, 3).corr == 1.0
    bool_schema = {"flag": {"type": "object", "properties": {"on": {"type": ["boolean", "integer"]}}}}
    bool_golden = GoldenCall("flag", {"on": True}, value_compare_args=("on",))
    assert score_action([bool_golden], [PredictedCall("flag", {"on": 1})], bool_schema, 3).corr == 0.0


def test_parallel_golden_calls_sharing_a_step_match_in_any_order():
    golden = [GoldenCall("lookup", {}, step=0),
              GoldenCall("price", {"code": "A"}, ("code",), step=1), GoldenCall("price", {"code": "B"}, ("code",), step=1)]
    predicted = [PredictedCall("price", {"code": "B"}), PredictedCall("lookup", {}), PredictedCall("price", {"code": "A"})]
    score = score_action(golden, predicted, SCHEMAS, 5)
    assert score.corr == 1.0
    assert [m.matched_index for m in score.matches] == [1, 2, 0]
    assert (score.cr, score.mpc, score.action) == (1.0, 1.0, 1.0)


def test_matching_is_maximum_not_greedy():
    # golden #0 accepts any search call; golden #1 only query 'b'. Greedy in golden order would give #0 the
    # only 'b' call and leave #1 unmatched.
    golden = [GoldenCall("search", {"query": "a"}), GoldenCall("search", {"query": "b"}, ("query",))]
    predicted = [PredictedCall("search", {"query": "b"}), PredictedCall("search", {"query": "a"})]
    score = score_action(golden, predicted, SCHEMAS, 5)
    assert score.corr == 1.0
    assert [m.matched_index for m in score.matches] == [1, 0]


def test_one_call_matches_at_most_one_of_two_identical_golden_actions():
    golden = [FILL_20, GoldenCall("fillTank", {"amount": 20}, ("amount",), step=0)]
    score = score_action(golden, [fill(20)], SCHEMAS, 5)
    assert score.corr == 0.5
    assert score.matches[1].reason == "compatible calls [0] were all assigned to other golden actions"
    # Nopt=2 > Ntotal=1: MPC is capped at 1, so Eff = 1 and ACTION = (0.5 + 1)/2
    assert (score.mpc, score.eff, score.action) == (1.0, 1.0, 0.75)


# --- efficiency details and malformed input ---------------------------------------------------

def test_duplicates_are_identical_tool_and_arguments_in_any_key_order():
    golden = [GoldenCall("search", {"query": "q"})]
    predicted = [PredictedCall("search", {"query": "q", "pageNo": 1}), PredictedCall("search", {"pageNo": 1, "query": "q"}),
                 PredictedCall("search", {"query": "q", "pageNo": 2}), PredictedCall("search", {"query": "q", "pageNo": 1})]
    score = score_action(golden, predicted, SCHEMAS, 10)
    # Ndup=2 of Ntotal=4: CR = 0.5; MPC = 1/4; Eff = 0.375; ACTION = (1 + 0.375)/2
    assert (score.n_dup, score.cr, score.mpc, score.eff, score.action) == (2, 0.5, 0.25, 0.375, 0.6875)


def test_malformed_calls_are_scored_and_counted_never_raised():
    predicted = [PredictedCall("fillTank", "{amount: 20"), PredictedCall("no_such_tool", {"x": 1}), fill(20)]
    score = score_action([FILL_20], predicted, SCHEMAS, 5)
    assert score.corr == 1.0 and score.n_total == 3
    assert score.matches[0].candidates[0] == CandidateCheck(
        0, (ArgProblem(Problem.ARGS_NOT_OBJECT, "", "arguments are str, not an object"),))
    # Ntotal=3, no duplicates: CR = 1, MPC = 1/3, Eff = 2/3, ACTION = 5/6
    assert score.action == pytest.approx(5 / 6)


def test_no_call_to_the_golden_tool_is_reported():
    score = score_action([FILL_20], [PredictedCall("lookup", {})], SCHEMAS, 5)
    assert score.matches[0].reason == "no predicted call to tool 'fillTank'"


def test_an_empty_trajectory_scores_zero_and_an_empty_task_scores_one():
    empty = score_action([FILL_20], [], SCHEMAS, 5)
    assert (empty.corr, empty.cr, empty.mpc, empty.eff, empty.action) == (0.0, 0.0, 0.0, 0.0, 0.0)
    nothing_to_do = score_action([], [], SCHEMAS, 0)
    assert (nothing_to_do.corr, nothing_to_do.eff, nothing_to_do.action) == (1.0, 1.0, 1.0)


def test_an_annotated_optimal_count_overrides_the_golden_count():
    score = score_action([FILL_20], [fill(20), fill(10)], SCHEMAS, 5, n_opt=2)
    assert (score.n_opt, score.mpc, score.eff) == (2, 1.0, 1.0)


def test_bad_golden_annotations_are_refused_with_the_action_named():
    with pytest.raises(ValueError, match=r"golden action #0 \(step 0\) calls 'unknown', which has no input schema"):
        score_action([GoldenCall("unknown", {})], [], SCHEMAS, 3)
    with pytest.raises(ValueError, match=r"value_compare_args \['volume'\] are not among its args \['amount'\]"):
        score_action([GoldenCall("fillTank", {"amount": 1}, ("volume",))], [], SCHEMAS, 3)
    with pytest.raises(ValueError, match="max_allowed_calls must be >= 0"):
        score_action([FILL_20], [], SCHEMAS, -1)


def test_a_real_catalog_schema_checks_key_paging_and_filters():
    spec = load_catalog().get("gg_multi_sports_complex")
    schemas = {spec.name: spec.input_schema()}
    golden = GoldenCall(spec.name, {"KEY": "kopa-gg-token", "SIGUN_NM": "수원시"}, value_compare_args=("SIGUN_NM",))
    good = PredictedCall(spec.name, {"KEY": "kopa-gg-other", "SIGUN_NM": "수원시", "pageNo": 2, "numOfRows": 100})
    bad = PredictedCall(spec.name, {"SIGUN_NM": "수원시", "pageNo": "2", "city": "수원"})
    score = score_action([golden], [bad, good], schemas, 4)
    assert score.matches[0].matched_index == 1
    assert [(p.kind, p.param) for p in score.matches[0].candidates[0].problems] == [
        (Problem.MISSING_PARAM, "KEY"), (Problem.WRONG_TYPE, "pageNo"), (Problem.UNEXPECTED_PARAM, "city")]


# --- issue 18: large integers compare exactly; a repeat the golden requires is not a duplicate -------

AMOUNT = {"type": "object", "properties": {"corp": {"type": "integer"}, "krw": {"type": "number"}},
          "required": ["corp"]}


@pytest.mark.parametrize("golden, predicted", [(2**53, 2**53 + 1), (10**17, 10**17 + 1), (2**63, 2**63 - 1)])
def test_large_integers_compare_exactly(golden, predicted):
    gold = GoldenCall("amount", {"corp": golden}, value_compare_args=("corp",))
    wrong = score_action([gold], [PredictedCall("amount", {"corp": predicted})], {"amount": AMOUNT}, 5)
    assert wrong.corr == 0.0
    assert wrong.matches[0].candidates[0].problems[0].kind is Problem.WRONG_VALUE
    right = score_action([gold], [PredictedCall("amount", {"corp": golden})], {"amount": AMOUNT}, 5)
    assert right.corr == 1.0


def test_an_int_widens_to_the_same_float_for_a_number_parameter_only():
    gold = GoldenCall("amount", {"corp": 1, "krw": 2500.0}, value_compare_args=("krw",))
    assert score_action([gold], [PredictedCall("amount", {"corp": 1, "krw": 2500})], {"amount": AMOUNT}, 5).corr == 1.0
    # a float close to, but not, the integer golden value: 10**17 + 1 rounds to 1e17 as a float, and must not match
    big = GoldenCall("amount", {"corp": 1, "krw": 10**17 + 1}, value_compare_args=("krw",))
    assert score_action([big], [PredictedCall("amount", {"corp": 1, "krw": 1e17})], {"amount": AMOUNT}, 5).corr == 0.0
    # an integer parameter never takes a float, however whole
    as_int = GoldenCall("amount", {"corp": 20}, value_compare_args=("corp",))
    assert score_action([as_int], [PredictedCall("amount", {"corp": 20.0})], {"amount": AMOUNT}, 5).corr == 0.0


def test_a_repeat_the_golden_requires_is_not_a_duplicate():
    # the golden trajectory itself calls fillTank(20) twice (EDGE's FAN junctions produce such repeats)
    golden = [FILL_20, GoldenCall("fillTank", {"amount": 20}, ("amount",), step=1)]
    exact = score_action(golden, [fill(20), fill(20)], SCHEMAS, 4)
    assert (exact.corr, exact.n_dup, exact.cr, exact.mpc, exact.action) == (1.0, 0, 1.0, 1.0, 1.0)
    # one repeat beyond what the golden needs is a duplicate: Ntotal=3, Ndup=1, CR=2/3, MPC=2/3, Eff=2/3
    extra = score_action(golden, [fill(20), fill(20), fill(20)], SCHEMAS, 4)
    assert extra.n_dup == 1
    assert (extra.cr, extra.mpc, extra.action) == (pytest.approx(2 / 3), pytest.approx(2 / 3), pytest.approx(5 / 6))
    # a golden that needs it once still counts the second identical call as a duplicate
    once = score_action([FILL_20], [fill(20), fill(20)], SCHEMAS, 4)
    assert (once.n_dup, once.cr) == (1, 0.5)
