"""One snapshot per grading: the bytes read once are the bytes graded and the bytes
recorded, and `kata history NAME --attempt N` shows them as Python reads them."""
from __future__ import annotations

import json

from conftest import stand_in_report

from practice import grading


def test_a_file_saved_while_it_is_graded_is_recorded_as_graded(kenv, monkeypatch):
    """The user saves a fixed file while the old one is being graded: the verdict and the
    recorded code are both the old file's, and the next grading sees the new one."""
    kenv.run("start", "softmax")
    path = kenv.attempt("softmax")
    path.write_bytes(b"def softmax(z):\n    return z  # wrong\n")
    seen = []

    def grade_while_saving(kata, p, source=None):
        seen.append(source)
        path.write_bytes(b"def softmax(z):\n    return z  # PASS\n")  # saved mid-grading
        return stand_in_report(kata, p, source)

    monkeypatch.setattr(grading, "grade", grade_while_saving)
    r = kenv.run("check", "--json")
    assert json.loads(r.stdout)["passed"] is False and r.exit_code == 1
    con = kenv.db()
    (code, passed), = con.execute("SELECT code, passed FROM gradings").fetchall()
    assert code == seen[0] == b"def softmax(z):\n    return z  # wrong\n" and passed == 0
    assert kenv.run("check").exit_code == 0  # the saved file, graded next time
    out = kenv.run("history", "softmax", "--attempt", "1").stdout
    assert "-    return z  # wrong" in out and "+    return z  # PASS" in out


def test_the_grader_is_given_the_bytes_that_are_recorded(kenv, monkeypatch):
    kenv.run("start", "rope")
    kenv.attempt("rope").write_bytes(b"x = 1  # PASS\r\n")
    given = []
    monkeypatch.setattr(grading, "grade",
                        lambda kata, p, source=None: given.append(source) or stand_in_report(kata, p, source))
    kenv.run("check")
    con = kenv.db()
    assert con.execute("SELECT code FROM gradings").fetchone()[0] == given[0] == b"x = 1  # PASS\r\n"


ENCODED = {
    "bom": "\ufeffdef softmax(z):\n    return z  # café\n".encode("utf-8"),
    "latin-1": "# -*- coding: latin-1 -*-\ndef softmax(z):\n    return z  # café\n".encode("latin-1"),
    "crlf": b"def softmax(z):\r\n    return z  # caf\xc3\xa9\r\n",
}


def test_history_shows_the_graded_bytes_decoded_as_python_reads_them(kenv):
    kenv.run("start", "softmax")
    for name, data in ENCODED.items():
        kenv.attempt("softmax").write_bytes(data)
        kenv.run("check")
    out = kenv.run("history", "softmax", "--attempt", "1", "--full").stdout
    assert out.count("    |    return z  # café") == 3, out
    assert "\ufeff" not in out and "\r" not in out and "caf\u00c3" not in out
    assert "    |# -*- coding: latin-1 -*-" in out


def test_rows_recorded_as_text_before_bytes_still_replay(kenv):
    kenv.run("start", "softmax")
    kenv.run("check")
    con = kenv.db()
    con.execute("UPDATE gradings SET code = 'def softmax(z):\n    return 1  # old text row\n'")
    con.commit()
    out = kenv.run("history", "softmax", "--attempt", "1").stdout
    assert "    |    return 1  # old text row" in out
