// The lead agent (DeerFlow's make_lead_agent): models, tools, the chain per switch,
// the system prompt, subagents, skills and MCP tools, concurrent requests.
#include <agentware/presets/lead_agent.hpp>

#include "lead_agent_support.hpp"

#include <agentware/middleware/deerflow_web_tools.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/deerflow_factory.hpp>
#include <agentware/tool/make_tool.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lead_agent_test {

using namespace agentware;

// A model factory over scripted models: every name gets the same script, and
// each call is recorded (the name and the thinking flag).
struct scripted_factory {
    scripted_model model;
    std::shared_ptr<std::vector<std::pair<std::string, bool>>> made =
        std::make_shared<std::vector<std::pair<std::string, bool>>>();
    std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();

    explicit scripted_factory(std::vector<message> answers = {}) : model(std::move(answers)) {}

    lead_model_factory factory() const {
        return [m = model, made = made, mutex = mutex](std::string_view name, bool thinking) {
            std::lock_guard lock(*mutex);
            made->emplace_back(std::string(name), thinking);
            model_info info;
            info.name = std::string(name);
            return any_chat_model(m, info);
        };
    }
};

inline lead_agent_setup setup_with(const scripted_factory& f) {
    lead_agent_setup s;
    s.model_factory = f.factory();
    return s;
}

inline const char* two_models = R"({"models": [
    {"name": "fast", "provider": "openai", "model": "gpt-x"},
    {"name": "deep", "provider": "anthropic", "model": "claude-x", "supports_thinking": true, "supports_vision": true}
]})";

TEST_CASE("lead agent: no configured model is DeerFlow's error", "[lead_agent]") {
    scripted_factory f;
    for (const char* config : {R"({})", R"({"models": []})"})
        CHECK_THROWS_WITH(
            make_lead_agent(boost::json::parse(config), {}, setup_with(f)),
            "No chat models are configured. Please configure at least one model in config.yaml.");
    CHECK(f.made->empty());
}

TEST_CASE("lead agent: model resolution is request, then agent, then first configured", "[lead_agent]") {
    const auto config = boost::json::parse(two_models);
    lead_agent_request r;
    CHECK(resolve_lead_model(config, r).model.name == "fast");
    r.model_name = "deep";
    CHECK(resolve_lead_model(config, r).model.name == "deep");
    // An unknown requested name falls back to the default, with a warning.
    r.model_name = "nope";
    auto choice = resolve_lead_model(config, r);
    CHECK(choice.model.name == "fast");
    REQUIRE(choice.warnings.size() == 2); // the fallback, and thinking off on "fast"
    CHECK(choice.warnings[0] == "requested model \"nope\" is not configured; using \"fast\"");

    auto with_agent = boost::json::parse(two_models).as_object();
    with_agent["agent"] = boost::json::object{{"model", "deep"}};
    r.model_name.reset();
    CHECK(resolve_lead_model(with_agent, r).model.name == "deep");
    r.model_name = "fast";
    CHECK(resolve_lead_model(with_agent, r).model.name == "fast");
    r.model_name = "nope"; // falls back to the agent's model
    CHECK(resolve_lead_model(with_agent, r).model.name == "deep");

    // From the run context: `model_name`, or `model`.
    CHECK(
        lead_agent_request::from_context(boost::json::parse(R"({"model": "deep"})").as_object()).model_name ==
        "deep");
    CHECK_THROWS_WITH(
        lead_agent_request::from_context(boost::json::parse(R"({"is_plan_mode": 1})").as_object()),
        Catch::Contains("is_plan_mode"));

    // make_lead_agent builds the resolved model through the factory.
    scripted_factory f;
    lead_agent_request req;
    req.model_name = "deep";
    auto lead = make_lead_agent(config, req, setup_with(f));
    REQUIRE(f.made->size() == 1);
    CHECK(f.made->front() == std::pair<std::string, bool>{"deep", true});
}

TEST_CASE("lead agent: thinking_enabled precedence", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    lead_agent_request r;
    r.model_name = "deep";
    CHECK(resolve_lead_model(config, r).thinking_enabled); // default: on
    config["agent"] = boost::json::object{{"thinking_enabled", false}};
    CHECK_FALSE(resolve_lead_model(config, r).thinking_enabled); // the agent's
    r.thinking_enabled = true;
    CHECK(resolve_lead_model(config, r).thinking_enabled); // the request's wins
    config["agent"] = boost::json::object{{"thinking_enabled", true}};
    r.thinking_enabled = false; // even false
    CHECK_FALSE(resolve_lead_model(config, r).thinking_enabled);
    // A model without thinking: off, with a warning.
    r.thinking_enabled = true;
    r.model_name = "fast";
    auto choice = resolve_lead_model(config, r);
    CHECK_FALSE(choice.thinking_enabled);
    REQUIRE(choice.warnings.size() == 1);
    CHECK(choice.warnings[0] ==
          "thinking is enabled but model \"fast\" does not support it; thinking is off");
}

TEST_CASE("lead agent: tools by group, bash dropped, deduped, task and view_image, non_interactive",
          "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    config["tools"] = boost::json::parse(R"([
        {"name": "web_search", "group": "web", "use": "tools:web_search"},
        {"name": "fetch", "group": "web", "use": "tools:fetch"},
        {"name": "bash", "group": "bash", "use": "deerflow.sandbox.tools:bash_tool"},
        {"name": "web_search", "group": "web", "use": "tools:other_search"},
        {"name": "calc", "group": "math", "use": "tools:calc"}
    ])");
    config["clarification"] = true;
    scripted_factory f;
    auto setup = setup_with(f);
    setup.tool_registry["tools:web_search"] = named_tool("web_search");
    setup.tool_registry["tools:fetch"] = named_tool("fetch");
    setup.tool_registry["tools:other_search"] = named_tool("web_search");
    setup.tool_registry["tools:calc"] = named_tool("calc");
    setup.tool_registry["deerflow.sandbox.tools:bash_tool"] = named_tool("bash");

    lead_agent_request r;
    auto lead = make_lead_agent(config, r, setup);
    CHECK(lead.tool_names == std::vector<std::string>{"web_search", "fetch", "calc", "ask_clarification"});
    CHECK(std::count_if(lead.warnings.begin(), lead.warnings.end(), [](const std::string& w) {
              return w.find("\"web_search\"") != std::string::npos &&
                     w.find("first is kept") != std::string::npos;
          }) == 1);

    // The agent's groups filter the configured tools.
    config["agent"] = boost::json::object{{"tool_groups", boost::json::array{"web"}}};
    r.subagent_enabled = true;
    r.model_name = "deep"; // vision
    lead = make_lead_agent(config, r, setup);
    CHECK(lead.tool_names ==
          std::vector<std::string>{"web_search", "fetch", "task", "view_image", "ask_clarification"});
    // The offered tools are those names, in a set.
    auto offered = lead.agent->offered_tools();
    CHECK(offered->size() == lead.tool_names.size());

    r.non_interactive = true;
    lead = make_lead_agent(config, r, setup);
    CHECK(lead.tool_names == std::vector<std::string>{"web_search", "fetch", "task", "view_image"});
    CHECK_FALSE(lead.agent->offered_tools()->find("ask_clarification"));

    // A configured tool nobody registered: the error names the entry.
    config["tools"].as_array().emplace_back(boost::json::object{{"name", "x"}, {"use", "tools:x"}});
    config.erase("agent");
    CHECK_THROWS_WITH(make_lead_agent(config, r, setup),
                      Catch::Contains("tools[5].use") && Catch::Contains("tools:x"));
}

TEST_CASE("lead agent: the chain's order per switch", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    for (const char* section :
         {"input_sanitization", "dangling_tool_call", "tool_error_handling", "durable_context", "token_usage",
          "system_message_coalescing", "loop_detection", "terminal_response", "model_length_finish_reason",
          "safety_finish_reason", "clarification"})
        config[section] = true;
    config["subagents"] = boost::json::object{{"max_total_per_run", 4}, {"timeout_seconds", 60}};
    scripted_factory f;
    const std::vector<std::string> base{
        "input_sanitization",         "dangling_tool_call",   "tool_receipt",
        "tool_error_handling",        "durable_context",      "token_accounting",
        "system_message_coalescing",  "loop_detection",       "terminal_response",
        "model_length_finish_reason", "safety_finish_reason", "clarification"};
    lead_agent_request r;
    auto lead = make_lead_agent(config, r, setup_with(f));
    CHECK(engaged_middleware_names(lead.agent->middleware()) == base);

    r.is_plan_mode = true;
    r.subagent_enabled = true;
    r.max_concurrent_subagents = 2;
    r.model_name = "deep";
    lead = make_lead_agent(config, r, setup_with(f));
    CHECK(engaged_middleware_names(lead.agent->middleware()) ==
          std::vector<std::string>{"input_sanitization", "dangling_tool_call", "tool_receipt",
                                   "tool_error_handling", "durable_context", "todo", "token_accounting",
                                   "view_image", "system_message_coalescing", "subagent_limit",
                                   "loop_detection", "terminal_response", "model_length_finish_reason",
                                   "safety_finish_reason", "clarification"});
    const auto* limit = lead.agent->middleware().get<subagent_limit>();
    REQUIRE(limit);
    CHECK(limit->options().max_concurrent == 2);
    CHECK(limit->options().max_total_per_run == 4);
    // The run's context carries the switches.
    const auto ctx = lead.config().context;
    CHECK(ctx.at("is_plan_mode").as_bool());
    CHECK(ctx.at("max_concurrent_subagents").to_number<std::int64_t>() == 2);

    // Switched off again: the slots are empty.
    r = {};
    lead = make_lead_agent(config, r, setup_with(f));
    CHECK(engaged_middleware_names(lead.agent->middleware()) == base);

    // summarization before durable_context, on purpose (docs/lead_agent.md): its context-length retry
    // rebuilds the request, and durable_context, inside it, projects the new summary again.
    config["summarization"] = true;
    lead = make_lead_agent(config, r, setup_with(f));
    const auto names = engaged_middleware_names(lead.agent->middleware());
    CHECK(std::vector<std::string>(names.begin(), names.begin() + 6) ==
          std::vector<std::string>{"input_sanitization", "dangling_tool_call", "tool_receipt",
                                   "tool_error_handling", "summarization", "durable_context"});
}

TEST_CASE("lead agent: the system prompt", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    config["agent"] = boost::json::object{{"name", "helper"}};
    scripted_factory f;
    auto setup = setup_with(f);
    setup.skills_index = "<skill_system>\n- deep-research: research with sources\n</skill_system>";
    lead_agent_request r;
    r.subagent_enabled = true;
    auto lead = make_lead_agent(config, r, setup);
    const std::string& p = lead.system_prompt;
    CHECK(p.find("You are helper") != std::string::npos);
    CHECK(p.find("</role>\n\n<skill_system>\n") != std::string::npos);
    CHECK(p.find("deep-research: research with sources") != std::string::npos);
    CHECK(p.find("- general-purpose: ") != std::string::npos);
    CHECK(
        p.find("- **Benefit-Based Delegation**: Default to direct execution. Use `task` only when expected "
               "benefit "
               "from real parallel latency, specialist capability, or context isolation clearly exceeds "
               "delegation, duplicate-discovery, synthesis, conflict, and side-effect costs. Use the fewest "
               "subagents needed. HARD LIMITS ARE NON-NEGOTIABLE: max 3 `task` calls per response, max 6 per "
               "run; excess calls are discarded and their work is lost.") != std::string::npos);
    CHECK(p.find("Your tools: task.") != std::string::npos);
    CHECK(lead.agent->options().system_prompt == p);
    // Static: the same configuration and switches give the same prompt (no date in it).
    CHECK(make_lead_agent(config, r, setup).system_prompt == p);

    // Clamped limits; one at a time drops the parallel-latency benefit.
    r.max_concurrent_subagents = 1;
    r.max_total_subagents = 99;
    const std::string one = make_lead_agent(config, r, setup).system_prompt;
    CHECK(one.find("expected benefit from specialist capability or context isolation clearly exceeds") !=
          std::string::npos);
    CHECK(one.find("max 1 `task` calls per response, max 50 per run") != std::string::npos);
    r.max_concurrent_subagents = 9;
    CHECK(make_lead_agent(config, r, setup).system_prompt.find("max 4 `task` calls per response") !=
          std::string::npos);
    // No subagents, no skills: neither section.
    r = {};
    setup.skills_index.clear();
    const std::string plain = make_lead_agent(config, r, setup).system_prompt;
    CHECK(plain.find("<subagents>") == std::string::npos);
    CHECK(plain.find("<skill_system>") == std::string::npos);
}

TEST_CASE("lead agent: a run delegates to a subagent and answers", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    boost::json::object args{
        {"description", "look"}, {"prompt", "Find the answer."}, {"subagent_type", "general-purpose"}};
    // The subagent inherits the parent's model: the script serves both, in call order.
    scripted_factory f({ai_message("", {tool_call{"call_1", "task", args}}), ai_message("forty-two"),
                        ai_message("The answer is forty-two.")});
    lead_agent_request r;
    r.subagent_enabled = true;
    auto lead = make_lead_agent(config, r, setup_with(f));
    lead_agent::state_type state;
    std::vector<std::string> events;
    run_config cfg;
    cfg.stream.on_event = [&](const boost::json::object& e) {
        events.emplace_back(e.at("type").as_string());
    };
    auto result = lead.run(state, agent_input(human_message("What is it?")), cfg);
    REQUIRE(result.reason == stop_reason::finished);
    CHECK(state.messages.back().text() == "The answer is forty-two.");
    const auto tool_msg = std::find_if(state.messages.begin(), state.messages.end(),
                                       [](const message& m) { return m.is_tool(); });
    REQUIRE(tool_msg != state.messages.end());
    CHECK(tool_msg->text() == "Task Succeeded. Result: forty-two");
    CHECK(events.front() == "task_started");
    CHECK(events.back() == "task_completed");
    // The subagent's request: its own prompt and the task, not the parent's history.
    const auto requests = f.model.requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[1].messages.back().text() == "Find the answer.");
    CHECK(requests[0].system_prompt == lead.system_prompt);
}

TEST_CASE("lead agent: skills in the chain and the prompt, MCP tools after the built-ins", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    for (const char* section : {"tool_error_handling", "durable_context", "clarification"})
        config[section] = true;
    config["skills"] = boost::json::object{{"path", "unused"}, {"container_path", "/mnt/skills"}};
    skill research;
    research.name = "deep-research";
    research.description = "Research with sources.";
    research.allowed_tools = std::vector<std::string>{"web_search", "read_file"};
    research.directory = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills/public/deep-research";
    auto catalog = std::make_shared<skill_catalog>();
    catalog->skills.push_back(research);
    scripted_factory f(
        {ai_message("",
                    {tool_call{"r1", "read_file", {{"path", "/mnt/skills/public/deep-research/SKILL.md"}}}}),
         ai_message("", {tool_call{"b1", "search_mcp", {}}, tool_call{"w1", "web_search", {}}}),
         ai_message("done")});
    auto setup = setup_with(f);
    setup.skills = catalog;
    setup.tool_registry["web_search"] = named_tool("web_search");
    config["tools"] = boost::json::array{boost::json::object{{"name", "web_search"}, {"group", "web"}}};
    // An MCP server's tools: one named like the built-in task (dropped, the built-in kept).
    setup.mcp_tools = [] {
        return std::vector<std::shared_ptr<tool_interface>>{named_tool("search_mcp"), named_tool("task")};
    };
    lead_agent_request r;
    r.subagent_enabled = true;
    auto lead = make_lead_agent(config, r, setup);
    CHECK(engaged_middleware_names(lead.agent->middleware()) ==
          std::vector<std::string>{"tool_receipt", "tool_error_handling", "skills", "skill_tool_policy",
                                   "durable_context", "subagent_limit", "clarification"});
    CHECK(lead.tool_names ==
          std::vector<std::string>{"web_search", "task", "search_mcp", "ask_clarification"});
    CHECK(std::find(lead.warnings.begin(), lead.warnings.end(),
                    "tool \"task\" (MCP) is already offered; the first is kept") != lead.warnings.end());
    // The subagents get the MCP tools too.
    REQUIRE(lead.executor);
    // The skills block comes from the catalog.
    CHECK(lead.system_prompt.find("<location>/mnt/skills/public/deep-research/SKILL.md</location>") !=
          std::string::npos);

    lead_agent::state_type state;
    auto result = lead.run(state, agent_input(human_message("Research it.")));
    REQUIRE(result.reason == stop_reason::finished);
    const auto& ms = state.messages;
    REQUIRE(ms.size() == 7);
    // The skills middleware answers the read and records the skill; its allowed-tools then apply.
    CHECK(ms[2].text().starts_with("---\nname: deep-research"));
    REQUIRE(get<skill_context_field>(state).size() == 1);
    CHECK(ms[4].text() == "Error: Tool 'search_mcp' is not allowed by the active skill policy.");
    CHECK(ms[5].text() == "ok");
    // The model's last request offered only what deep-research allows.
    const auto requests = f.model.requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[2].tool_names == std::vector<std::string>{"web_search"});
}

TEST_CASE("lead agent: its subagents get the catalog, limited to their type's skills", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    config["subagents"] = boost::json::parse(R"({"custom_agents": {"analyst": {
        "description": "Analyses.", "system_prompt": "Analyse.", "skills": ["data-analysis"]}}})");
    auto catalog = std::make_shared<skill_catalog>();
    for (const char* name : {"deep-research", "data-analysis"}) {
        skill s;
        s.name = name;
        s.description = "A skill.";
        s.directory = std::string(AGENTWARE_TEST_DATA_DIR) + "/skills/public/" + name;
        catalog->skills.push_back(s);
    }
    boost::json::object args{{"description", "d"}, {"prompt", "Analyse it."}, {"subagent_type", "analyst"}};
    scripted_factory f(
        {ai_message("", {tool_call{"t1", "task", args}}), ai_message("analysed"), ai_message("done")});
    auto setup = setup_with(f);
    setup.skills = catalog;
    lead_agent_request r;
    r.subagent_enabled = true;
    auto lead = make_lead_agent(config, r, setup);
    lead_agent::state_type state;
    REQUIRE(lead.run(state, agent_input(human_message("Go."))).reason == stop_reason::finished);
    const auto requests = f.model.requests();
    REQUIRE(requests.size() == 3);
    // The lead's prompt lists both skills; the analyst's system message its own prompt and data-analysis.
    CHECK(lead.system_prompt.find("/mnt/skills/public/deep-research/SKILL.md") != std::string::npos);
    const std::string sub = requests[1].messages.front().text();
    CHECK(sub.starts_with("Analyse.\n\n<skill_system>"));
    CHECK(sub.find("/mnt/skills/public/data-analysis/SKILL.md") != std::string::npos);
    CHECK(sub.find("deep-research") == std::string::npos);
}

TEST_CASE("lead agent: concurrent requests with different switches see their own",
          "[lead_agent][concurrency]") {
    auto config = boost::json::parse(two_models).as_object();
    config["clarification"] = true;
    scripted_factory f;
    const auto setup = setup_with(f);
    std::vector<std::vector<std::string>> tools(2), chains(2);
    std::vector<std::string> answers(2);
    auto work = [&](std::size_t i) {
        for (int round = 0; round < 20; ++round) {
            lead_agent_request r;
            r.is_plan_mode = i == 0;
            r.subagent_enabled = i == 1;
            r.non_interactive = i == 1;
            lead_agent lead = make_lead_agent(config, r, setup);
            // Each run answers from a script of its own.
            lead.agent->model() = any_chat_model(scripted_model({ai_message("run " + std::to_string(i))}));
            lead_agent::state_type state;
            auto result = lead.run(state, agent_input(human_message("hi")));
            answers[i] = state.messages.back().text();
            tools[i] = lead.tool_names;
            chains[i] = engaged_middleware_names(lead.agent->middleware());
            (void)result;
        }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    CHECK(answers[0] == "run 0");
    CHECK(answers[1] == "run 1");
    CHECK(tools[0] == std::vector<std::string>{"write_todos", "ask_clarification"});
    CHECK(tools[1] == std::vector<std::string>{"task"});
    CHECK(chains[0] == std::vector<std::string>{"tool_receipt", "todo", "clarification"});
    CHECK(chains[1] == std::vector<std::string>{"tool_receipt", "subagent_limit", "clarification"});
}

TEST_CASE("lead agent: DeerFlow's community tools from their entries, an unknown use lists what is supported",
          "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    // The stock config.yaml's tools: the web tools, and the sandbox's by name.
    config["tools"] = boost::json::parse(R"([
        {"name": "web_search", "group": "web", "use": "deerflow.community.ddg_search.tools:web_search_tool",
         "max_results": 5},
        {"name": "web_fetch", "group": "web", "use": "deerflow.community.jina_ai.tools:web_fetch_tool", "timeout": 10},
        {"name": "image_search", "group": "web", "use": "deerflow.community.image_search.tools:image_search_tool",
         "max_results": 5},
        {"name": "ls", "group": "file:read", "use": "deerflow.sandbox.tools:ls_tool"}
    ])");
    config["sandbox"] = boost::json::object{{"use", "deerflow.sandbox.local:LocalSandboxProvider"}};
    scripted_factory f;
    auto setup = setup_with(f);
    setup.tool_factories = deerflow_community_tools();
    lead_agent_request r;
    auto lead = make_lead_agent(config, r, setup);
    CHECK(lead.tool_names.at(0) == "web_search");
    CHECK(lead.tool_names.at(1) == "web_fetch");
    CHECK(lead.tool_names.at(2) == "image_search");
    CHECK(std::find(lead.tool_names.begin(), lead.tool_names.end(), "ls") != lead.tool_names.end());

    // The entry's settings reach the factory: a misspelt one is an error naming it.
    config["tools"].as_array()[1].as_object()["timout"] = 10;
    CHECK_THROWS_WITH(make_lead_agent(config, r, setup), Catch::StartsWith("tools[1].timout: unknown key"));
    config["tools"].as_array()[1].as_object().erase("timout");

    // A Python module agentware has no counterpart for: refused, with what is supported.
    config["tools"].as_array()[0].as_object()["use"] = "deerflow.community.exa.tools:web_search_tool";
    CHECK_THROWS_WITH(
        make_lead_agent(config, r, setup),
        Catch::StartsWith(
            "tools[0].use: no tool is registered as \"deerflow.community.exa.tools:web_search_tool\" "
            "(supported: deerflow.community.ddg_search.tools:web_search_tool, "
            "deerflow.community.image_search.tools:image_search_tool, "
            "deerflow.community.jina_ai.tools:web_fetch_tool, ") &&
            Catch::Contains("read_file"));
}

TEST_CASE("lead agent: the helper models are made by its factory, by name, at start", "[lead_agent]") {
    auto config = boost::json::parse(two_models).as_object();
    config["title"] = boost::json::object{{"model_name", "deep"}};
    config["summarization"] = boost::json::object{{"model_name", "fast"}};
    config["model_fallback"] = boost::json::object{{"models", boost::json::array{"deep", "fast"}}};
    config["llm_tool_selector"] = boost::json::object{{"model", "deep"}};
    config["tool_emulator"] = boost::json::object{{"model", "fast"}};
    config["memory"] =
        boost::json::object{{"model_name", "deep"}, {"backend_config", {{"debounce_seconds", 300}}}};
    scripted_factory f;
    lead_agent_request r;
    r.thinking_enabled = false;
    auto lead = make_lead_agent(config, r, setup_with(f));
    // The lead's model first, then each helper by the name its key gives, without thinking.
    CHECK(*f.made == std::vector<std::pair<std::string, bool>>{{"fast", false},
                                                               {"fast", false},   // summarization
                                                               {"deep", false},   // title
                                                               {"deep", false},   // llm_tool_selector
                                                               {"fast", false},   // tool_emulator
                                                               {"deep", false},   // model_fallback[0]
                                                               {"fast", false},   // model_fallback[1]
                                                               {"deep", false}}); // memory
    auto& chain = lead.agent->middleware();
    CHECK(chain.get<title>()->model->info().name == "deep");
    CHECK(chain.get<summarization>()->model->info().name == "fast");
    CHECK(chain.get<model_fallback>()->models().size() == 2);
    // Memory on: dynamic_context shows the model what it keeps, as in DeerFlow's lead.
    REQUIRE(chain.get<dynamic_context>() != nullptr);

    // Memory without a name: the app's default model (the first configured); dynamic_context: false is kept.
    config = boost::json::parse(two_models).as_object();
    config["memory"] = boost::json::object{{"backend_config", {{"debounce_seconds", 300}}}};
    config["dynamic_context"] = false;
    scripted_factory g;
    r.model_name = "deep";
    lead = make_lead_agent(config, r, setup_with(g));
    CHECK(*g.made == std::vector<std::pair<std::string, bool>>{{"deep", false}, {"fast", false}});
    CHECK(lead.agent->middleware().get<dynamic_context>() == nullptr);

    // A name that is not configured stops the start, naming its key; nothing else is made.
    config = boost::json::parse(two_models).as_object();
    config["title"] = boost::json::object{{"model_name", "nope"}};
    CHECK_THROWS_WITH(make_lead_agent(config, {}, setup_with(f)),
                      "title.model_name: no model named \"nope\" is configured (models: fast, deep)");
    // A program that gives the helpers itself: the factory makes the lead's model only.
    scripted_factory h;
    auto setup = setup_with(h);
    bool attached = false;
    setup.attach_helpers = [&](deerflow_pipeline&) { attached = true; };
    (void)make_lead_agent(config, {}, setup);
    CHECK(attached);
    CHECK(h.made->size() == 1);
}

} // namespace lead_agent_test
