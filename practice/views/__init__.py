"""What the commands draw, as rich Text for practice.term (the one output path) to print: a
module a view, each saying what it draws.

- attempt: an attempt, a grading or an interview in words (clock, result, label, file).
- report: a grading's report, its summary, and both under the attempt's name.
- picture, efficiency: a failing check's picture; the efficiency a grading measured.
- question: a kata's interview question and its follow-up questions.
- check, watch: what `kata check` and `kata watch` draw while and after they grade.
- start, status, hints, submit, mock, followups: what those commands say.
- history, progress, compare: `kata history`, `kata progress`, `kata compare` and `kata solution`.

Wording: the properties a grader tests are "checks" ("7/7 checks passed"); each run of the
grader on an attempt is a "grading" ("graded 8 times").
"""
