"""Ships the top-level kernels/ templates inside the wheel as clgrad/kernels/."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "clgrad" / "kernels"
        target.mkdir(parents=True, exist_ok=True)
        for template in sorted(Path(__file__).parent.joinpath("kernels").glob("*.cl.mako")):
            shutil.copy2(template, target / template.name)


setup(cmdclass={"build_py": BuildPyWithKernels})
