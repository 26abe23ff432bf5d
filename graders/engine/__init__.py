"""The grading engine: the judge, the attempt's process, the vocabulary graders are written in."""
