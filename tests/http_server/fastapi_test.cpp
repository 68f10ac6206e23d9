// The FastAPI-compatible pieces the batch-size and Perseus servers share:
// query parameters as Starlette reads them, JSON bodies and 422 details.
#include <gtest/gtest.h>

#include <chrono>

#include "http_server/fastapi.hpp"

namespace zeus::http_server::fastapi {
namespace {

TEST(FastApiQuery, DecodesEscapesAndPlusAndTheLastValueWins) {
    EXPECT_EQ(query_parameter("job_id=a%2Fb+c", "job_id"), "a/b c");
    EXPECT_EQ(query_parameter("rank=1&rank=3", "rank"), "3");
    EXPECT_EQ(query_parameter("x=1&job%5Fid=j", "job_id"), "j");  // the name is decoded too
    EXPECT_EQ(query_parameter("job_id", "job_id"), "");             // present without a value
    EXPECT_FALSE(query_parameter("other=1", "job_id"));
    EXPECT_FALSE(query_parameter("", "job_id"));
}

// A value that is not percent-encoded UTF-8 is a 422 naming the parameter
// (it was a 500 when the id reached a JSON answer), in every server that reads queries here.
TEST(FastApiQuery, AValueThatIsNotPercentEncodedUtf8IsA422) {
    for (const char* query : {"job_id=%FF", "job_id=%C3%28", "job_id=%zz", "job_id=%4", "job_id=%ED%A0%80"}) {
        try {
            (void)query_parameter(query, "job_id");
            ADD_FAILURE() << query << " was accepted";
        } catch (const ValidationError& e) {
            EXPECT_EQ(e.detail()[0]["loc"], nlohmann::json::array({"query", "job_id"})) << query;
            EXPECT_NO_THROW((void)e.detail().dump()) << query;
        }
    }
    EXPECT_EQ(query_parameter("job_id=%C3%A9", "job_id"), "\u00e9");  // UTF-8 text is fine
}

TEST(FastApiBody, ABodyNestedTooDeeplyIsRefusedBeforeItIsBuilt) {
    Request request{http::verb::post, "/x", 11};
    request.body() = std::string(64, '[') + std::string(64, ']');
    EXPECT_NO_THROW((void)json_body(request));
    request.body() = std::string(8 << 20, '[');  // 8 MiB of '[': was seconds of CPU and hundreds of MB
    const auto start = std::chrono::steady_clock::now();
    try {
        (void)json_body(request);
        FAIL() << "a body nested 8 Mi levels deep was accepted";
    } catch (const ValidationError& e) {
        EXPECT_EQ(e.detail()[0]["loc"], nlohmann::json::array({"body"}));
        EXPECT_NE(e.detail()[0]["msg"].get<std::string>().find("deeper than 64"), std::string::npos) << e.detail();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
    // Brackets inside strings are text, not nesting.
    request.body() = R"({"a": ")" + std::string(1000, '[') + R"("})";
    EXPECT_NO_THROW((void)json_body(request));
}

TEST(FastApiBody, ABodyThatIsNotUtf8IsA422ThatSerialises) {
    Request request{http::verb::post, "/x", 11};
    request.body() = "{\"job_id\": \"\xFF\"}";
    try {
        (void)json_body(request);
        FAIL() << "a body that is not UTF-8 was accepted";
    } catch (const ValidationError& e) {
        EXPECT_NO_THROW((void)e.detail().dump()) << "the 422 itself could not be sent";
    }
}

TEST(FastApiBody, InvalidJsonIsA422DetailAtTheBytesOffset) {
    Request request{http::verb::post, "/x", 11};
    request.body() = R"({"a": 1})";
    EXPECT_EQ(json_body(request).at("a"), 1);
    request.body() = R"({"a": })";
    try {
        (void)json_body(request);
        FAIL() << "invalid JSON was accepted";
    } catch (const ValidationError& e) {
        // FastAPI (0.125, the original's server) answers this body with
        // {"type":"json_invalid","loc":["body",6],"msg":"JSON decode error","input":{},
        //  "ctx":{"error":"Expecting value"}}: 6 is where Python's json.loads fails
        // ("line 1 column 7 (char 6)").
        const auto& problem = e.detail().at(0);
        EXPECT_EQ(problem.at("type"), "json_invalid");
        EXPECT_EQ(problem.at("loc"), nlohmann::json::parse(R"(["body", 6])"));
        EXPECT_EQ(problem.at("msg"), "JSON decode error");
        EXPECT_EQ(problem.at("input"), nlohmann::json::object());
        EXPECT_NE(problem.at("ctx").at("error").get<std::string>().find("unexpected '}'"), std::string::npos);
    }
    request.body() = R"({"a": 1)";  // Python: "line 1 column 8 (char 7)"
    try {
        (void)json_body(request);
        FAIL() << "a truncated document was accepted";
    } catch (const ValidationError& e) {
        EXPECT_EQ(e.detail().at(0).at("loc"), nlohmann::json::parse(R"(["body", 7])"));
    }
    request.body() = R"({"time": 1e400})";
    try {
        (void)json_body(request);
        FAIL() << "a number beyond double's range was accepted";
    } catch (const ValidationError& e) {
        EXPECT_NE(e.detail().at(0).at("msg").get<std::string>().find("1e400"), std::string::npos) << e.detail();
    }
}

TEST(FastApiValidation, OneProblemHasLocMsgAndType) {
    const auto error = invalid({"query", "rank"}, "field required", "value_error.missing");
    EXPECT_EQ(error.detail(), nlohmann::json::parse(
                                  R"([{"loc": ["query", "rank"], "msg": "field required", "type": "value_error.missing"}])"));
    EXPECT_EQ(invalid({"body"}, "bad").detail().at(0).at("type"), "value_error");
}

}  // namespace
}  // namespace zeus::http_server::fastapi
