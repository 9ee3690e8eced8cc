import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout


class AgentwareTestPackageConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def _components(self):
        # The optional components the tested package was created with.
        options = self.dependencies["agentware"].options
        return [name for name in ("https", "yaml") if options.get_safe(f"with_{name}")]

    def generate(self):
        toolchain = CMakeToolchain(self)
        # CMakeLists.txt fails when one of them is missing instead of skipping its program.
        toolchain.cache_variables["AGENTWARE_REQUIRED_COMPONENTS"] = ",".join(self._components())
        # A component the package was created without is not looked for either,
        # even when the machine has its library (Debian's, with [platform_requires]):
        # the test then proves that a consumer builds without it.
        options = self.dependencies["agentware"].options
        if not options.get_safe("with_https"):
            toolchain.cache_variables["CMAKE_DISABLE_FIND_PACKAGE_OpenSSL"] = "ON"
        if not options.get_safe("with_yaml"):
            toolchain.cache_variables["CMAKE_DISABLE_FIND_PACKAGE_yaml-cpp"] = "ON"
        toolchain.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        # The programs run here, not as build steps: a cross build compiles
        # and links them, and runs none.
        if not can_run(self):
            return
        for program in ["test_package"] + [f"test_package_{name}" for name in self._components()]:
            self.run(os.path.join(self.cpp.build.bindir, program), env="conanrun")
