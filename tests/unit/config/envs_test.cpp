#include "config/envs.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace cosmicac;
using namespace cosmicac::config;
using V = std::vector<std::string>;

namespace {
V env_of(std::string_view s) {
  auto r = parse_envs(s);
  INFO("ENVS: " << s);
  if (!r) FAIL("unexpected error: " << r.error());
  return *r;
}
Error error_of(std::string_view s) {
  auto r = parse_envs(s);
  INFO("ENVS: " << s);
  REQUIRE_FALSE(r);
  CHECK(r.error().reason == Reason::ConfigInvalid);
  return r.error();
}
}  // namespace

TEST_CASE("ENVS: the script's corrupting cases come out right") {
  CHECK(env_of(R"(CFG={url:"http://h:8080/x",n:5})") == V{R"(CFG={"url":"http://h:8080/x","n":5})"});
  CHECK(env_of("CFG={name:llama,max_tokens:512}") == V{R"(CFG={"name":"llama","max_tokens":512})"});
  CHECK(env_of(R"(CFG={a:"x;y"};B=2)") == V{R"(CFG={"a":"x;y"})", "B=2"});
  CHECK(env_of("MSG=hello world") == V{"MSG=hello world"});
}

TEST_CASE("ENVS: shell syntax is data and nothing runs") {
  auto const marker = std::filesystem::temp_directory_path() / ("cosmicac-envs-" + std::to_string(::getpid()));
  std::filesystem::remove(marker);
  std::string const envs = "X=1 $(touch " + marker.string() + ");Y=`touch " + marker.string() + "`";
  CHECK(env_of(envs) == V{"X=1 $(touch " + marker.string() + ")", "Y=`touch " + marker.string() + "`"});
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK(env_of("A=$HOME;B=a=b=c;C=it's") == V{"A=$HOME", "B=a=b=c", "C=it's"});
}

TEST_CASE("ENVS: bare-word URL and the ':' rule") {
  CHECK(env_of("CFG={url:http://h:8080/x}") == V{R"(CFG={"url":"http://h:8080/x"})"});
  CHECK(env_of("CFG={a:b:c}") == V{R"(CFG={"a":"b:c"})"});
  CHECK(env_of("L=[a:b, -x, ./p, 1.2.3]") == V{R"(L=["a:b","-x","./p","1.2.3"])"});
  CHECK(env_of(R"(CFG={"k:x":1})") == V{R"(CFG={"k:x":1})"});
}

TEST_CASE("ENVS: numbers keep their text; non-numbers are strings") {
  CHECK(env_of("N=[1.50,1e3,-0,0.0,1E+9,-2.5e-3]") == V{"N=[1.50,1e3,-0,0.0,1E+9,-2.5e-3]"});
  CHECK(env_of("N=[01,+1,1.,.5,0x10,1e,NaN,Infinity,1_000]") ==
        V{R"(N=["01","+1","1.",".5","0x10","1e","NaN","Infinity","1_000"])"});
  CHECK(env_of("B={t:true,f:false,n:null,s:'true',q:\"null\"}") ==
        V{R"(B={"t":true,"f":false,"n":null,"s":"true","q":"null"})"});
}

TEST_CASE("ENVS: nesting, trailing commas, whitespace and quoting inside literals") {
  CHECK(env_of("C={ a : { b : [ 1 , 2 , ] , } , 'c d' : \"e\\\"f\" , }") ==
        V{R"(C={"a":{"b":[1,2]},"c d":"e\"f"})"});
  CHECK(env_of("E={};F=[];G=[[]]") == V{"E={}", "F=[]", "G=[[]]"});
  CHECK(env_of(R"(S={a:'it\'s',b:"\u00e9\n\t",c:"\ud83d\ude00"})") ==
        V{"S={\"a\":\"it's\",\"b\":\"\xC3\xA9\\n\\t\",\"c\":\"\xF0\x9F\x98\x80\"}"});
  CHECK(env_of("U={k:caf\xC3\xA9}") == V{"U={\"k\":\"caf\xC3\xA9\"}"});
}

TEST_CASE("ENVS: quoted values are unquoted, the rest is literal") {
  CHECK(env_of(R"(A="x;y";B='p;q')") == V{"A=x;y", "B=p;q"});
  CHECK(env_of(R"(A="say \"hi\" \\ \n")") == V{R"(A=say "hi" \ \n)"});
  CHECK(env_of(R"(A='a\"b')") == V{R"(A=a\"b)"});
  CHECK(env_of(R"(A="{not:json}")") == V{"A={not:json}"});
  CHECK(env_of(R"(A="  padded  ")") == V{"A=  padded  "});
  CHECK(env_of("A=;B=") == V{"A=", "B="});
  CHECK(env_of("A=x\"y") == V{"A=x\"y"});
}

TEST_CASE("ENVS: entries are trimmed, value bodies are not; empty entries ignored") {
  CHECK(env_of("  A=1 ;\n B=two words\t;;\n;C= lead") == V{"A=1", "B=two words", "C= lead"});
  CHECK(env_of("A=line1\nline2") == V{"A=line1\nline2"});
  CHECK(env_of("A= {x:1}") == V{"A= {x:1}"});  // not a literal: the value starts with a space
  CHECK(env_of("") == V{});
  CHECK(env_of(" ;; \n ") == V{});
  CHECK(env_of("CFG={a:1}  ;B=2") == V{R"(CFG={"a":1})", "B=2"});
}

TEST_CASE("ENVS: errors name position and key, never the value") {
  auto e = error_of("A=1;secretvalue;C=3");
  CHECK(e.message == "ENVS entry 2: expected KEY=VALUE, found no '='");
  e = error_of("A=1;B");
  CHECK(e.message == "ENVS entry 2: expected KEY=VALUE, found no '='");
  e = error_of("A=1;;2BAD=x");
  CHECK(e.message == "ENVS entry 2: invalid variable name \"2BAD\" (must match [A-Za-z_][A-Za-z0-9_]*)");
  e = error_of("A B=x");
  CHECK(e.message.find("ENVS entry 1: invalid variable name (") == 0);
  e = error_of("OK=1;CFG={a:\"hunter2;B=2");
  CHECK(e.message.find("ENVS entry 2 (CFG): unterminated string") == 0);
  CHECK(e.message.find("hunter2") == std::string::npos);
  e = error_of("CFG={a:[1,2}");
  CHECK(e.message.find("ENVS entry 1 (CFG): expected ',' or ']'") == 0);
  e = error_of("P='hunter2");
  CHECK(e.message == "ENVS entry 1 (P): unterminated quote");
  e = error_of("P=\"hunter2\"x");
  CHECK(e.message == "ENVS entry 1 (P): text after the closing quote (quote the whole value)");
  CHECK(e.message.find("hunter2") == std::string::npos);
  e = error_of("P={a:1} trailing");
  CHECK(e.message == "ENVS entry 1 (P): unexpected text after the literal (missing ';'?)");
  e = error_of("P=bad\xFF");
  CHECK(e.message == "ENVS entry 1 (P): value is not valid UTF-8");
  e = error_of(std::string("P=a\0b", 5));
  CHECK(e.message == "ENVS entry 1 (P): value contains a NUL byte");
  e = error_of("P={a:1,a:2}");
  CHECK(e.message.find("duplicate key") != std::string::npos);
}

TEST_CASE("ENVS: the Env array as JSON") {
  CHECK(envs_to_json_array({}) == "[]");
  CHECK(envs_to_json_array({"A=1", R"(CFG={"a":"x;y"})", "M=\"q\"\n"}) ==
        R"(["A=1","CFG={\"a\":\"x;y\"}","M=\"q\"\n"])");
}

TEST_CASE("ENVS: encoder quotes what would be misread") {
  using P = std::vector<std::pair<std::string, EnvValue>>;
  CHECK(encode_envs(P{{"A", std::string("plain")}, {"B", std::string("")}}).value() == "A=plain;B=");
  CHECK(encode_envs(P{{"A", std::string("x;y")}}).value() == R"(A="x;y")");
  CHECK(encode_envs(P{{"A", std::string("{a:1}")}}).value() == R"(A="{a:1}")");
  CHECK(encode_envs(P{{"A", std::string(R"("q\)")}}).value() == R"(A="\"q\\")");
  CHECK(encode_envs(P{{"A", std::string(" pad")}}).value() == R"(A=" pad")");
  CHECK(encode_envs(P{{"J", nlohmann::json::parse(R"({"b":[1,"x;y"],"a":null})")}}).value() ==
        R"(J={"a":null,"b":[1,"x;y"]})");
  CHECK(encode_envs(P{{"S", nlohmann::json("str")}}).value() == R"(S="\"str\"")");
  auto bad = encode_envs(P{{"1X", std::string("v")}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "ENVS variable 1: invalid name \"1X\"");
  CHECK_FALSE(encode_envs(P{{"A", std::string("\xC0\x80")}}));
}
