# `agentware serve` driven by the official LangGraph clients (included from
# tests/CMakeLists.txt). cmake/server-sdk-test.sh installs the pinned JS SDK
# (npm ci, tests/server/sdk/package-lock.json) and Python SDK (a virtual
# environment, pip install --no-deps -r tests/server/sdk/requirements.txt) once
# into ${CMAKE_BINARY_DIR}/server-sdk/: the first run needs the npm and PyPI
# registries, later runs none. Each test starts its own server on 127.0.0.1
# (a free port, a fresh data directory), restarts it once, and stops it.
option(AGENTWARE_SERVER_SDK_TESTS "Test agentware serve with the official LangGraph SDKs (needs node, npm, python3-venv)" ON)
if(AGENTWARE_BUILD_EXAMPLES AND AGENTWARE_SERVER_SDK_TESTS)
  foreach(client IN ITEMS js python)
    add_test(NAME server_sdk.${client}
             COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/server-sdk-test.sh ${client} $<TARGET_FILE:agentware_cli>
                     ${CMAKE_BINARY_DIR})
    # Installs and runs are per client (server-sdk/js, server-sdk/venv, server-sdk/run-<client>):
    # the two tests may run at the same time.
    set_tests_properties(server_sdk.${client} PROPERTIES LABELS "server;sdk" TIMEOUT 300)
  endforeach()
endif()
