import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy

required_conan_version = ">=2.0"


class AgentwareConan(ConanFile):
    name = "agentware"
    version = "0.1.0"
    description = "Header-only C++20 framework for LLM agents extended by compile-time middleware"
    license = "BSL-1.0"
    topics = ("header-only", "llm", "agents", "middleware")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    # The HTTP model clients need OpenSSL, config.yaml and skills need
    # yaml-cpp; a program without them needs neither.
    options = {"with_https": [True, False], "with_yaml": [True, False]}
    default_options = {"with_https": True, "with_yaml": True}
    # What package() needs: the CMake project, its package config template, the headers.
    exports_sources = "CMakeLists.txt", "LICENSE", "cmake/agentwareConfig.cmake.in", "include/*"
    no_copy_source = True

    def requirements(self):
        # The public headers include these, so they reach consumers.
        self.requires("boost/1.81.0")
        self.requires("fmt/9.1.0")
        if self.options.with_https:
            self.requires("openssl/[>=3 <4]")
        if self.options.with_yaml:
            self.requires("yaml-cpp/[>=0.7 <0.9]")

    def validate(self):
        check_min_cppstd(self, 20)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        CMakeToolchain(self).generate()
        CMakeDeps(self).generate()

    def build(self):
        pass  # header-only: nothing to compile

    def package(self):
        cmake = CMake(self)
        cmake.configure(variables={"AGENTWARE_BUILD_TESTS": "OFF", "AGENTWARE_BUILD_EXAMPLES": "OFF",
                                   "AGENTWARE_INSTALL": "ON"})
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_id(self):
        # Header-only: one package for every configuration (with_https and
        # with_yaml only change what consumers require).
        self.info.clear()

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "agentware")
        # The components carry the CMake package's target names; the whole package is agentware::all.
        self.cpp_info.set_property("cmake_target_name", "agentware::all")
        # The CMake package's targets: agentware::agentware, the HTTP model
        # clients' agentware::https (OpenSSL), config.yaml's and the skills'
        # agentware::yaml (yaml-cpp), and agentware::separate_compilation (the
        # library compiled once, in the consumer's file that includes <agentware/src.hpp>).
        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "agentware::agentware")
        core.bindirs = []
        core.libdirs = []
        core.requires = ["boost::boost", "fmt::fmt"]
        core.system_libs = ["pthread"]
        separate = self.cpp_info.components["separate_compilation"]
        separate.set_property("cmake_target_name", "agentware::separate_compilation")
        separate.bindirs = []
        separate.libdirs = []
        separate.includedirs = []
        separate.defines = ["AGENTWARE_SEPARATE_COMPILATION"]
        separate.requires = ["core"]
        if self.options.get_safe("with_https", True):
            https = self.cpp_info.components["https"]
            https.set_property("cmake_target_name", "agentware::https")
            https.bindirs = []
            https.libdirs = []
            https.requires = ["core", "openssl::openssl"]
        if self.options.get_safe("with_yaml", True):
            yaml = self.cpp_info.components["yaml"]
            yaml.set_property("cmake_target_name", "agentware::yaml")
            yaml.bindirs = []
            yaml.libdirs = []
            yaml.requires = ["core", "yaml-cpp::yaml-cpp"]
        # With platform-provided dependencies ([platform_requires] in the
        # profile), which CMakeDeps generates nothing for, let find_package
        # load the package's own config, which finds Boost, fmt, OpenSSL and
        # yaml-cpp itself. The toolchain puts the components' builddirs (not
        # the package's, once it has components) on CMAKE_PREFIX_PATH.
        if self.conf.get("user.agentware:use_installed_config", default=False, check_type=bool):
            self.cpp_info.set_property("cmake_find_mode", "none")
            core.builddirs = [os.path.join("share", "agentware", "cmake")]
