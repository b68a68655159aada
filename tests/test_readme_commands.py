"""README.md starts with the two commands a newcomer runs; .ci/run must run the second (the
whole suite, system packages included) exactly as README.md prints it, so what CI proves is
what the README promises."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_an_install_and_run_command_and_a_test_command():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("goblin-ring-server")
    assert "apt-get install" in commands[1] and "redis-server" in commands[1]
    assert commands[1].endswith("python -m pytest")


def test_ci_runs_the_readme_test_command_verbatim():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci_lines
