"""The graders: the engine (graders/engine) and one folder per kata (graders/KATA: its grader,
domain, known bugs and alternative answers)."""
