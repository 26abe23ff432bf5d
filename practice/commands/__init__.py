"""The commands of `kata`, one module each: practice/commands/NAME.py is `kata NAME`.

kata.py's group lists them in the order of a practice round and imports a command's module
only when it is run, or its help is asked for. How a command is written:

- its module holds `command`, the click command (for `kata dev`, a group), one short
  function that parses, asks the practice side to do the work and prints what a view draws
  (practice/views/), through practice.cli.out; the help ends with its examples
  (practice.cli.examples);
- it imports click and practice.cli at the top and nothing heavy: what it needs is imported
  inside the function, once the command line is parsed, after a command that grades has
  started its judge (practice.startup.start_grading);
- the user's mistakes are usage errors (exit 2) and known conditions click errors (exit 1),
  through practice.cli.friendly; Ctrl-C exits 130.
"""
