// view_image (tool and request-only injection) and an end-to-end run of
// thread_data, uploads, sandbox and view_image with a scripted model.
#include "deerflow_support.hpp"

#include <catch2/catch.hpp>

using namespace agentware;
namespace fs = std::filesystem;
using dftest::sandbox_env;

namespace {
const std::string png_bytes = std::string("\x89PNG\r\n\x1A\n\0\0\0\rIHDR", 16);
const std::string jpeg_bytes = std::string("\xFF\xD8\xFF\xE0\0\x10JFIF", 10);
const std::string gif_bytes = "GIF89a\x01\0\x01\0";
const std::string webp_bytes = std::string("RIFF\x0C\0\0\0WEBPVP8 ", 16);

std::string view(sandbox_env& env, const std::string& p) {
    return env.call("view_image", boost::json::object{{"image_path", p}}).text();
}
} // namespace

TEST_CASE("view_image reads the four formats and records metadata only", "[middleware][view_image]") {
    sandbox_env env;
    dftest::write(env.ws() / "a.png", png_bytes);
    dftest::write(env.uploads() / "b.JPG", jpeg_bytes);
    dftest::write(env.outputs() / "c.gif", gif_bytes);
    dftest::write(env.ws() / "d.webp", webp_bytes);
    auto out = env.call("view_image", R"({"image_path":"/mnt/user-data/workspace/a.png"})");
    CHECK(out.text() == "Successfully read image");
    CHECK(out.status == tool_status::ok);
    CHECK(view(env, "/mnt/user-data/uploads/b.JPG") == "Successfully read image");
    CHECK(view(env, "/mnt/user-data/outputs/c.gif") == "Successfully read image");
    CHECK(view(env, "/mnt/user-data/workspace/d.webp") == "Successfully read image");
    const auto& seen = env.state.get<viewed_images_field>();
    REQUIRE(seen.size() == 4);
    const auto* a = seen.find("/mnt/user-data/workspace/a.png");
    REQUIRE(a);
    CHECK(*a == viewed_image{"image/png", 16, fs::weakly_canonical(env.ws() / "a.png").string()});
    CHECK(seen.find("/mnt/user-data/uploads/b.JPG")->mime_type == "image/jpeg");
    CHECK(seen.find("/mnt/user-data/outputs/c.gif")->mime_type == "image/gif");
    CHECK(seen.find("/mnt/user-data/workspace/d.webp")->mime_type == "image/webp");
}

TEST_CASE("view_image rejects what the reference rejects, with its texts",
          "[middleware][view_image][paths]") {
    sandbox_env env;
    dftest::write(env.outside() / "x.png", png_bytes);
    dftest::write(env.ws() / "p.jpg", png_bytes);
    dftest::write(env.ws() / "t.png", "not an image at all");
    dftest::write(env.ws() / "i.bmp", "BM");
    fs::create_directories(env.ws() / "dir.png");
    fs::create_symlink(env.outside() / "x.png", env.ws() / "link.png");
    {
        std::ofstream big(env.ws() / "big.png", std::ios::binary);
        big << png_bytes;
    }
    fs::resize_file(env.ws() / "big.png", 20 * 1024 * 1024 + 1); // sparse: cheap

    const std::string only =
        "Error: Only image paths under /mnt/user-data/workspace, /mnt/user-data/uploads, "
        "/mnt/user-data/outputs are allowed";
    CHECK(view(env, (env.outside() / "x.png").string()) == only);
    CHECK(view(env, "/mnt/user-data/x.png") == only);
    CHECK(view(env, "/mnt/skills/x.png") == only);
    CHECK(view(env, "/mnt/user-data/workspace/../../../outside/x.png") ==
          "Error: Access denied: path traversal detected");
    CHECK(view(env, "/mnt/user-data/workspace/link.png") == "Error: Access denied: path traversal detected");
    CHECK(view(env, "/mnt/user-data/workspace/none.png") ==
          "Error: Image file not found: /mnt/user-data/workspace/none.png");
    CHECK(view(env, "/mnt/user-data/workspace/dir.png") ==
          "Error: Path is not a file: /mnt/user-data/workspace/dir.png");
    CHECK(view(env, "/mnt/user-data/workspace/i.bmp") ==
          "Error: Unsupported image format: .bmp. Supported formats: .jpg, .jpeg, .png, .webp, .gif");
    CHECK(view(env, "/mnt/user-data/workspace/big.png") ==
          "Error: Image file is too large: 20971521 bytes. Maximum supported size is 20971520 bytes");
    CHECK(view(env, "/mnt/user-data/workspace/t.png") ==
          "Error: File contents do not match a supported image format");
    CHECK(view(env, "/mnt/user-data/workspace/p.jpg") ==
          "Error: Image contents are image/png, but file extension indicates image/jpeg");
    CHECK(env.call("view_image", R"({"path":"x"})").text() ==
          "Error: argument 'image_path' must be a string");
    CHECK(env.state.get<viewed_images_field>().empty());
}

namespace {
struct images_agent {
    dftest::temp_dir base;
    scripted_model model;
    explicit images_agent(std::vector<message> script) : model(std::move(script)) {}
    fs::path ws() const {
        return base.path / "users" / "default" / "threads" / "default" / "user-data" / "workspace";
    }
};
} // namespace

TEST_CASE("viewed images go into the next request only, after the tool messages",
          "[middleware][view_image][inject]") {
    images_agent t(
        {test::calls(
             {test::call("v1", "view_image", R"({"image_path":"/mnt/user-data/workspace/a.png"})"),
              test::call("v2", "view_image", R"({"image_path":"/mnt/user-data/workspace/gone.png"})")}),
         ai_message("I see a red square"), ai_message("second turn")});
    dftest::write(t.ws() / "a.png", png_bytes);
    auto a = make_agent(t.model, tool_set{}, thread_data({t.base.path.string(), true}), view_image{});
    a.use_checkpointer(memory_checkpointer{});
    auto r = a.invoke("look at it");
    REQUIRE(r.ok());
    const auto reqs = t.model.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].messages.size() == 1);
    CHECK(reqs[0].tool_names == std::vector<std::string>{"view_image"});
    const auto& msgs = reqs[1].messages;
    REQUIRE(msgs.size() == 5); // human, ai, tool, tool, image context
    CHECK(msgs[2].is_tool());
    CHECK(msgs[3].is_tool());
    CHECK(msgs[3].text() == "Error: Image file not found: /mnt/user-data/workspace/gone.png");
    const message& ctx = msgs[4];
    CHECK(ctx.is_human());
    CHECK(ctx.id.starts_with("view-image-context:"));
    CHECK(ctx.metadata.at("hide_from_ui") == true);
    CHECK(ctx.metadata.at("deerflow_view_image_context") == true);
    REQUIRE(ctx.content.size() == 3);
    CHECK(ctx.content[0].text == "Here are the images you've viewed:");
    CHECK(ctx.content[1].text == "\n- **/mnt/user-data/workspace/a.png** (image/png)");
    CHECK(ctx.content[2] == image_block_from_data("image/png", png_bytes));
    for (const auto& m : r.state.messages)
        CHECK_FALSE(m.has_images()); // never stored

    // The next turn does not re-send them: its last ai message made no view_image call.
    auto r2 = a.invoke("and now?");
    REQUIRE(r2.ok());
    const auto reqs2 = t.model.requests();
    for (const auto& m : reqs2.back().messages)
        CHECK_FALSE(m.has_images());
}

namespace {
// Rewrites a file before the second model call (after view_image saw it).
struct rewrite_before_round_two {
    fs::path file;
    std::string content;
    void before_model(auto&, runtime& rt) {
        if (rt.round == 2) dftest::write(file, content);
    }
};
} // namespace

TEST_CASE("an image that changed on disk is described, not sent", "[middleware][view_image][inject]") {
    images_agent t(
        {test::calls({test::call("v1", "view_image", R"({"image_path":"/mnt/user-data/workspace/a.png"})")}),
         ai_message("ok")});
    dftest::write(t.ws() / "a.png", png_bytes);
    auto a = make_agent(t.model, tool_set{}, thread_data({t.base.path.string(), true}), view_image{},
                        rewrite_before_round_two{t.ws() / "a.png", png_bytes + "more"});
    REQUIRE(a.invoke("x").ok());
    const auto reqs = t.model.requests();
    const auto& ctx = reqs[1].messages.back();
    REQUIRE(ctx.content.size() == 3);
    CHECK(ctx.content[2].text ==
          "  (file unavailable or changed on disk: " + fs::weakly_canonical(t.ws() / "a.png").string() + ")");
}

TEST_CASE("a view_image round that viewed nothing says so", "[middleware][view_image][inject]") {
    images_agent t(
        {test::calls({test::call("v1", "view_image", R"({"image_path":"/etc/x.png"})")}), ai_message("ok")});
    auto a = make_agent(t.model, tool_set{}, thread_data({t.base.path.string(), true}), view_image{});
    REQUIRE(a.invoke("x").ok());
    const auto reqs = t.model.requests();
    const auto& ctx = reqs[1].messages.back();
    REQUIRE(ctx.content.size() == 1);
    CHECK(ctx.content[0].text == "No images have been viewed.");
}

TEST_CASE("without vision support there is no view_image tool and no injection", "[middleware][view_image]") {
    images_agent t(
        {test::calls({test::call("v1", "view_image", R"({"image_path":"/mnt/user-data/workspace/a.png"})")}),
         ai_message("ok")});
    auto a = make_agent(t.model, tool_set{}, thread_data({t.base.path.string(), true}), view_image({false}));
    REQUIRE(a.invoke("x").ok());
    const auto reqs = t.model.requests();
    CHECK(reqs[0].tool_names.empty());
    CHECK(reqs[1].messages.back().is_tool()); // "no tool named view_image", nothing injected
}

TEST_CASE("an agent with thread_data, uploads, sandbox and view_image does a whole task",
          "[middleware][e2e]") {
    dftest::temp_dir base;
    const fs::path data = base.path / "users" / "alice" / "threads" / "proj-1" / "user-data";
    dftest::write(data / "uploads" / "sales data.csv", "region,amount\nnorth,10\nsouth,32\n");
    dftest::write(data / "uploads" / "chart.png", png_bytes);

    scripted_model model({
        test::calls(
            {test::call("c1", "grep",
                        R"({"description":"find","pattern":"south","path":"/mnt/user-data/uploads"})"),
             test::call(
                 "c2", "bash",
                 R"({"description":"sum","command":"awk -F, 'NR>1{s+=$2} END{print s}' '/mnt/user-data/uploads/sales data.csv' > /mnt/user-data/outputs/total.txt; cat /mnt/user-data/outputs/total.txt"})"),
             test::call("c3", "view_image", R"({"image_path":"/mnt/user-data/uploads/chart.png"})")}),
        test::calls(
            {test::call(
                 "c4", "write_file",
                 R"({"description":"report","path":"/mnt/user-data/outputs/report.md","content":"Total: 42 (see /mnt/user-data/outputs/total.txt)\n"})"),
             test::call("c5", "present_files", R"({"filepaths":["/mnt/user-data/outputs/report.md"]})")}),
        ai_message("The total is 42."),
        test::calls({test::call("c7", "ls", R"({"description":"look","path":"/mnt/user-data/outputs"})"),
                     test::call("c8", "read_file",
                                R"({"description":"check","path":"/mnt/user-data/outputs/report.md"})")}),
        ai_message("Done."),
    });
    sandbox_options so;
    so.allow_host_bash = true;
    auto a = make_agent(model, tool_set{}, thread_data({base.path.string(), true}), uploads{}, sandbox(so),
                        view_image{});
    a.use_checkpointer(memory_checkpointer{});
    run_config cfg;
    cfg.thread_id = "proj-1";
    cfg.context["user_id"] = "alice";
    auto r = a.invoke("Sum the sales and show me the chart", cfg);
    REQUIRE(r.ok());
    CHECK(r.answer() == "The total is 42.");

    const auto reqs = model.requests();
    REQUIRE(reqs.size() == 3);
    const std::string first_user = reqs[0].messages[0].text();
    CHECK_THAT(first_user, Catch::StartsWith(
                               "<current_uploads>\nThe following files were uploaded in this message:\n\n"
                               "- chart.png (0.0 KB)\n  Path: /mnt/user-data/uploads/chart.png\n\n"
                               "- sales data.csv (0.0 KB)\n  Path: /mnt/user-data/uploads/sales data.csv\n"));
    CHECK_THAT(first_user, Catch::EndsWith("</current_uploads>\n\nSum the sales and show me the chart"));
    CHECK(reqs[0].tool_names == std::vector<std::string>{"bash", "ls", "read_file", "write_file",
                                                         "str_replace", "glob", "grep", "present_files",
                                                         "view_image"});

    const auto& round1 = reqs[1].messages;
    REQUIRE(round1.size() == 6);
    CHECK(round1[2].text() ==
          "Found 1 matches under /mnt/user-data/uploads\n/mnt/user-data/uploads/sales data.csv:3: south,32");
    CHECK(round1[3].text() == "42\n");
    CHECK(round1[4].text() == "Successfully read image");
    CHECK(round1[5].has_images());

    const auto& round2 = reqs[2].messages;
    CHECK(round2[round2.size() - 2].text() == "OK");
    CHECK(round2.back().text() == "Successfully presented files");
    CHECK(dftest::read(data / "outputs" / "report.md") ==
          "Total: 42 (see " + (data / "outputs" / "total.txt").string() + ")\n");

    CHECK(r.state.get<sandbox_field>()->sandbox_id == "local:alice:proj-1");
    CHECK(r.state.get<artifacts_field>() == std::vector<std::string>{"/mnt/user-data/outputs/report.md"});
    CHECK(r.state.get<uploaded_files_field>()->size() == 2);
    CHECK(r.state.get<viewed_images_field>().find("/mnt/user-data/uploads/chart.png"));
    CHECK(r.state.get<thread_data_field>()->workspace_path == (data / "workspace").string());

    // Second turn: no upload block again, same sandbox, no images.
    auto r2 = a.invoke("What is in outputs?", cfg);
    REQUIRE(r2.ok());
    CHECK(r2.answer() == "Done.");
    const auto all = model.requests();
    const auto& turn2 = all[3].messages;
    CHECK(turn2.back().text() == "What is in outputs?");
    CHECK(r2.state.get<uploaded_files_field>()->empty());
    const auto& turn2_tools = all[4].messages;
    CHECK(turn2_tools[turn2_tools.size() - 2].text() ==
          "/mnt/user-data/outputs/report.md\n/mnt/user-data/outputs/total.txt");
    CHECK(turn2_tools.back().text() == "Total: 42 (see /mnt/user-data/outputs/total.txt)\n"); // virtual again
    CHECK(r2.state.get<sandbox_field>()->sandbox_id == "local:alice:proj-1");
    for (const auto& m : r2.state.messages)
        CHECK_FALSE(m.has_images());
}
