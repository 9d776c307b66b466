"""Packaging beyond pyproject.toml: the wheel carries the data the installed
commands read (control_plane/pipelines.py finds it with importlib.resources
under control_plane/data/): the compiled P4 programs (bmv2_configs/build,
tofino_configs), the topologies and the scenarios. In a checkout they are
read where they are."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = {  # folder -> files of it shipped (same relative paths under control_plane/data/)
    "bmv2_configs/build": "*",
    "bmv2_configs/topologies": "*.yaml",
    "tofino_configs": "*",
    "scenarios": "**/*.yaml",
}


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        for folder, pattern in DATA.items():
            for src in sorted((ROOT / folder).glob(pattern)):
                if src.is_file():
                    dst = Path(self.build_lib) / "control_plane" / "data" / src.relative_to(ROOT)
                    self.mkpath(str(dst.parent))
                    self.copy_file(str(src), str(dst))


setup(cmdclass={"build_py": BuildWithData})
