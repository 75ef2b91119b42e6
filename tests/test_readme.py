"""The README's Python blocks run as pasted, in order, in one session (as a reader
would paste them), and its first screen keeps the two set-up-and-go commands."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), re.S)


def test_readme_python_blocks_run_in_order(capsys):
    namespace = {"__name__": "readme"}
    blocks = _blocks("python")
    assert blocks
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md python block {i}", "exec"), namespace)
    assert "dot_general" in capsys.readouterr().out     # the printed gradient program
    assert namespace["g"].shape == namespace["w"].shape


def test_readme_starts_with_the_two_setup_commands():
    first = _blocks("bash")[0]
    commands = [line for line in first.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2 and all("python3 -m venv .venv" in c for c in commands)
    assert "examples/quickstart.py" in commands[0] and "pytest" in commands[1]
    assert "../shared" not in README.read_text()
