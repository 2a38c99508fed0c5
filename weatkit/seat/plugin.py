"""SEAT plugged into weatkit (:mod:`weatkit.measures.plugins`): its registry entry and its
``weatkit compare`` section. SEAT runs from the command line as list sets of ``weatkit run``
(``--lists seat --span sequence``), so it declares no command of its own."""

from __future__ import annotations

from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

MAY = (
    "May, Wang, Bordia, Bowman & Rudinger (2019). On Measuring Social Biases in Sentence "
    "Encoders. NAACL 2019."
)
#: SEAT's registry entry: WEAT's d on one vector per sentence.
MEASURE = Measure(
    "seat",
    "seat",
    "SEAT",
    "Cohen's d = (mean_X s(x) − mean_Y s(y)) / std_{X∪Y} s(t), s(t) = mean_A cos(e(t), e(a)) "
    "− mean_B cos(e(t), e(b)) over the encodings e of bleached template sentences",
    neutral=0.0,
    stereotypical="above",
    citation=MAY,
    model_kinds=("mlm", "glm"),
    languages=("en",),
)

PLUGIN = Plugin(
    name="seat",
    api={},
    command=None,
    summary="SEAT: WEAT over sentence encodings of bleached templates (May et al., NAACL 2019).",
    docs="measures/seat.md",
    measures=(MEASURE,),
    compare=Compare(
        section="weatkit.seat.compare:read_section",
        rows="weatkit.seat.compare:seat_rows",
        inputs="weatkit.seat.compare:job_inputs",
    ),
)
