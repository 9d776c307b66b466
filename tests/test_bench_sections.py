"""A benchmark run alone rewrites only its own section of latest.md."""

from bench import sections


def test_a_section_is_replaced_the_others_kept_and_a_new_one_appended(tmp_path, monkeypatch):
    path = tmp_path / "latest.md"
    path.write_text("# Benchmarks\n\n## A\nold a\n\n## B\nb\n")
    monkeypatch.setattr(sections, "RESULTS", path)
    sections.replace(["## A", "new a", ""])
    assert path.read_text() == "# Benchmarks\n\n## B\nb\n\n## A\nnew a\n"
    sections.replace(["## C", "c"])
    sections.replace(["## B", "b2"])
    assert path.read_text() == "# Benchmarks\n\n## A\nnew a\n\n## C\nc\n\n## B\nb2\n"
