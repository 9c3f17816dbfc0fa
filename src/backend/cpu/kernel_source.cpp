// Source transformations of the CPU backend (see kernel_source.hpp). The rewrite runs on
// preprocessed text, so macros are already expanded and comments gone; what remains to respect
// is string and character literals, pp-numbers with digit separators, and the line markers that
// say which file (user or system) each line comes from.
#include "kernel_source.hpp"

#include <cctype>

#include "opkit/detail/identifier.hpp"
#include "opkit/error.hpp"
#include "opkit_cpu_abi.h"

namespace opkit::cpu {
namespace {

using opkit::detail::is_identifier_char;
using opkit::detail::is_identifier_start;

// A C string literal holding `text`.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

std::string trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

class Rewriter {
 public:
  Rewriter(std::string_view in, const std::string& source_name) : in_(in), file_(source_name) {
    out_.reserve(in.size() + in.size() / 32);
  }

  RewrittenSource run() {
    bool line_start = true;
    while (pos_ < in_.size()) {
      char c = in_[pos_];
      if (line_start) {
        std::size_t p = pos_;
        while (p < in_.size() && (in_[p] == ' ' || in_[p] == '\t')) ++p;
        if (p < in_.size() && in_[p] == '#') {
          directive();
          continue;
        }
        line_start = false;
      }
      if (c == '\n') {
        copy(pos_ + 1);
        ++line_;
        line_start = true;
      } else if (is_identifier_start(c)) {
        identifier();
      } else if (c == '"' || c == '\'') {
        literal(pos_);
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < in_.size() && std::isdigit(static_cast<unsigned char>(in_[pos_ + 1])))) {
        number();
      } else {
        if (!std::isspace(static_cast<unsigned char>(c))) punctuation(c);
        copy(pos_ + 1);
      }
    }
    return {std::move(out_), std::move(user_), std::move(kernel_namespaces_)};
  }

 private:
  // Appends input [pos_, end) unchanged.
  void copy(std::size_t end) {
    out_.append(in_.substr(pos_, end - pos_));
    if (!system_) user_.append(in_.substr(pos_, end - pos_));
    pos_ = end;
  }
  // Replaces input [pos_, end) with `text` (the original still goes to the user-code view).
  void replace(std::size_t end, std::string_view text) {
    out_.append(text);
    if (!system_) user_.append(in_.substr(pos_, end - pos_));
    pos_ = end;
  }

  // A line marker (`# 12 "file.cu" 2 3`) sets the file and number of the next line; other
  // directives that survive preprocessing (#pragma) pass through.
  void directive() {
    std::size_t end = in_.find('\n', pos_);
    end = end == std::string_view::npos ? in_.size() : end + 1;
    std::string_view text = in_.substr(pos_, end - pos_);
    if (!line_marker(text)) {
      copy(end);
      ++line_;
      return;
    }
    // The marker itself is no code: kept in the output, a blank line in the user view.
    out_.append(text);
    user_.append("\n");
    pos_ = end;
  }

  // Applies `text` when it is a line marker (or #line); false for any other line.
  bool line_marker(std::string_view text) {
    std::size_t p = text.find_first_not_of(" \t");
    if (p == std::string_view::npos || text[p] != '#') return false;
    p = text.find_first_not_of(' ', p + 1);
    if (p != std::string_view::npos && text.compare(p, 4, "line") == 0) p = text.find_first_not_of(' ', p + 4);
    if (p == std::string_view::npos || !std::isdigit(static_cast<unsigned char>(text[p]))) return false;
    long number = 0;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p])))
      number = number * 10 + (text[p++] - '0');
    while (p < text.size() && text[p] == ' ') ++p;
    if (p < text.size() && text[p] == '"') {
      std::string name;
      for (++p; p < text.size() && text[p] != '"'; ++p) {
        if (text[p] == '\\' && p + 1 < text.size()) ++p;
        name += text[p];
      }
      file_ = name;
      ++p;
    }
    bool system = false;  // flag 3: the following lines come from a system header
    for (; p < text.size(); ++p)
      if (text[p] == '3' && text[p - 1] == ' ' &&
          (p + 1 == text.size() || !std::isdigit(static_cast<unsigned char>(text[p + 1]))))
        system = true;
    system_ = system;
    line_ = number;
    return true;
  }

  void identifier() {
    std::size_t start = pos_, end = pos_;
    while (end < in_.size() && is_identifier_char(in_[end])) ++end;
    std::string_view word = in_.substr(start, end - start);
    if (end < in_.size() && (in_[end] == '"' || in_[end] == '\'') &&
        (word == "u8" || word == "u" || word == "U" || word == "L" || word == "R" || word == "u8R" || word == "uR" ||
         word == "UR" || word == "LR")) {
      literal(end, word.back() == 'R');
      return;
    }
    if (word == "__global__") {
      record_kernel(end);
      replace(end, std::string(word.size(), ' '));
    } else if (word == "__shared__") {
      bool has_static = after_static_ || next_identifier(end) == "static";
      replace(end, has_static ? "thread_local" : "static thread_local");
    } else if (word == "extern" && next_identifier(end) == "__shared__") {
      extern_shared(end);
      return;
    } else {
      copy(end);
    }
    after_static_ = word == "static";
    after_literal_ = false;
    if (word == "namespace") {
      pending_namespace_ = true;
      pending_name_.clear();
    } else if (pending_namespace_ && word != "inline") {
      pending_name_ += (pending_name_.empty() ? "" : "::") + std::string(word);
    }
  }

  // Scope tracking, so that a kernel inside `namespace a {` is known as a::name.
  void punctuation(char c) {
    after_static_ = false;
    if (c == '{') {
      // A namespace, or the transparent block of `extern "C" {`; anything else (a class, a
      // function body) is a scope no kernel can be declared in.
      scopes_.push_back({pending_namespace_ || after_literal_, pending_namespace_ ? pending_name_ : ""});
      pending_namespace_ = false;
    } else if (c == '}') {
      if (!scopes_.empty()) scopes_.pop_back();
    } else if (c == ';' || c == '=') {
      pending_namespace_ = false;  // `using namespace x;`, `namespace y = x;`
    }
    after_literal_ = false;
  }

  // After `__global__` at `p`: the declared function's name (the identifier before its
  // parameter list, attributes skipped) with the enclosing namespaces.
  void record_kernel(std::size_t p) {
    std::string qualifier;
    for (const Scope& scope : scopes_) {
      if (!scope.is_namespace) return;
      if (!scope.name.empty()) qualifier += (qualifier.empty() ? "" : "::") + scope.name;
    }
    std::string name;
    bool extend = false;
    while (p < in_.size()) {
      char c = in_[p];
      if (c == '#' && p > 0 && in_[p - 1] == '\n') {  // a line marker
        p = in_.find('\n', p);
        if (p == std::string_view::npos) return;
      } else if (is_identifier_start(c)) {
        std::size_t start = p;
        while (p < in_.size() && is_identifier_char(in_[p])) ++p;
        std::string_view word = in_.substr(start, p - start);
        if (word == "__attribute__" || word == "alignas" || word == "__declspec" || word == "decltype") {
          p = skip_parentheses(p);
          continue;
        }
        name = extend ? name + std::string(word) : std::string(word);
        extend = false;
        continue;
      } else if (c == ':' && p + 1 < in_.size() && in_[p + 1] == ':') {
        name += "::";
        extend = true;
        ++p;
      } else if (c == '(') {
        break;
      } else if (c == ';' || c == '{' || c == '}' || c == '"' || c == '=') {
        return;
      }
      ++p;
    }
    std::size_t split = name.rfind("::");
    if (split != std::string::npos) {
      qualifier += (qualifier.empty() || split == 0 ? "" : "::") + name.substr(0, split);
      name = name.substr(split + 2);
    }
    if (!name.empty()) kernel_namespaces_.emplace(name, qualifier);
  }

  // From just after a keyword: past its balanced (...) group, if one follows.
  std::size_t skip_parentheses(std::size_t p) const {
    while (p < in_.size() && std::isspace(static_cast<unsigned char>(in_[p]))) ++p;
    if (p >= in_.size() || in_[p] != '(') return p;
    int depth = 0;
    for (; p < in_.size(); ++p) {
      depth += (in_[p] == '(') - (in_[p] == ')');
      if (depth == 0) return p + 1;
    }
    return p;
  }

  // The identifier after p, over whitespace and line markers (a macro from a system header,
  // such as __align__, puts its expansion between markers).
  std::string_view next_identifier(std::size_t p) const {
    for (;;) {
      while (p < in_.size() && std::isspace(static_cast<unsigned char>(in_[p]))) ++p;
      if (p >= in_.size() || in_[p] != '#' || (p > 0 && in_[p - 1] != '\n')) break;
      p = in_.find('\n', p);
      if (p == std::string_view::npos) return {};
    }
    std::size_t start = p;
    while (p < in_.size() && is_identifier_char(in_[p])) ++p;
    return in_.substr(start, p - start);
  }

  // `extern __shared__ SPEC name[];` -> `SPEC static thread_local* const name = <dynamic base>;`
  // A block-scope or namespace-scope thread_local pointer is initialised on first use in each OS
  // thread, and each worker thread's dynamic shared memory stays at one address for its lifetime.
  void extern_shared(std::size_t after_extern) {
    const std::string start_file = file_;
    const long start_line = line_;
    std::size_t semicolon = in_.find("__shared__", after_extern) + 10;
    std::string decl;  // the text between __shared__ and ';', without line markers
    bool line_start = false;
    while (semicolon < in_.size() && in_[semicolon] != ';' && in_[semicolon] != '{' && in_[semicolon] != '}') {
      if (line_start && in_[semicolon] == '#') {
        std::size_t end = in_.find('\n', semicolon);
        if (end == std::string_view::npos) end = in_.size();
        line_marker(in_.substr(semicolon, end - semicolon));
        --line_;  // the newline ending the marker counts the marker's next line
        semicolon = end;
        continue;
      }
      char c = in_[semicolon++];
      line_start = c == '\n' || (line_start && (c == ' ' || c == '\t'));
      if (c == '\n') ++line_;
      decl += c == '\n' ? ' ' : c;
    }
    std::string body = trim(decl);
    std::string name, spec;
    if (!body.empty() && body.back() == ']') {
      std::size_t open = body.rfind('[');
      if (open != std::string::npos && trim(std::string_view(body).substr(open + 1, body.size() - open - 2)).empty()) {
        std::string before = trim(std::string_view(body).substr(0, open));
        std::size_t n = before.size();
        while (n > 0 && is_identifier_char(before[n - 1])) --n;
        name = before.substr(n);
        spec = trim(std::string_view(before).substr(0, n));
      }
    }
    // One declarator only: a '[' or a top-level ',' in the type means `T a[], b[]` or worse.
    int depth = 0;
    for (char c : spec) {
      depth += (c == '(' || c == '<') - (c == ')' || c == '>');
      if (c == '[' || c == ']' || (c == ',' && depth == 0)) name.clear();
    }
    if (semicolon >= in_.size() || in_[semicolon] != ';' || name.empty() || spec.empty() ||
        !is_identifier_start(name.front()))
      throw Error(Errc::compile, "CPU backend",
                  start_file + ":" + std::to_string(start_line) +
                      ": unsupported extern __shared__ declaration; the CPU backend needs the form "
                      "`extern __shared__ T name[];` (one unsized array per declaration)")
          .with_source_name(start_file);
    std::string replacement = spec + " static thread_local* const " + name + " = ::opkit_cpu::dynamic_shared();";
    if (line_ != start_line || file_ != start_file || system_) {
      // The declaration spanned lines or markers: say where the text after the ';' is.
      replacement += "\n# " + std::to_string(line_) + " " + quoted(file_) + (system_ ? " 3" : "") + "\n";
    }
    replace(semicolon + 1, replacement);
    after_static_ = false;
  }

  // A string or character literal starting at `quote` (prefix, if any, from pos_).
  void literal(std::size_t quote, bool raw = false) {
    char delim = in_[quote];
    std::size_t p = quote + 1;
    if (raw && delim == '"') {
      std::size_t open = in_.find('(', p);
      std::string close(")");
      close.append(in_.substr(p, open - p)).append("\"");
      std::size_t end = in_.find(close, open);
      end = end == std::string_view::npos ? in_.size() : end + close.size();
      for (std::size_t q = pos_; q < end; ++q) line_ += in_[q] == '\n';
      copy(end);
      after_static_ = false;
      after_literal_ = true;
      return;
    }
    while (p < in_.size() && in_[p] != delim && in_[p] != '\n') p += in_[p] == '\\' ? 2 : 1;
    copy(p < in_.size() && in_[p] == delim ? p + 1 : std::min(p, in_.size()));
    after_static_ = false;
    after_literal_ = delim == '"';
  }

  // pp-number: digits, letters, '.', digit separators, and signs after an exponent letter.
  void number() {
    std::size_t p = pos_ + 1;
    while (p < in_.size()) {
      char c = in_[p];
      const bool exponent_sign =
          (c == '+' || c == '-') && (in_[p - 1] == 'e' || in_[p - 1] == 'E' || in_[p - 1] == 'p' || in_[p - 1] == 'P');
      if (is_identifier_char(c) || c == '.' || exponent_sign) {
        ++p;
      } else if (c == '\'' && p + 1 < in_.size() && is_identifier_char(in_[p + 1])) {
        p += 2;
      } else {
        break;
      }
    }
    copy(p);
    after_static_ = false;
    after_literal_ = false;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::string out_, user_;
  std::string file_;
  long line_ = 1;
  bool system_ = false;
  bool after_static_ = false;   // the previous token was `static`
  bool after_literal_ = false;  // ... a string literal (as in extern "C" {)
  struct Scope {
    bool is_namespace;  // or extern "C" { }
    std::string name;   // "" for an anonymous namespace or a linkage block
  };
  std::vector<Scope> scopes_;
  bool pending_namespace_ = false;  // between `namespace` and its `{`
  std::string pending_name_;
  std::multimap<std::string, std::string> kernel_namespaces_;
};

}  // namespace

std::string first_pass_source(const std::string& source, const std::string& source_name) {
  std::string text = std::string("#include \"") + kShimHeader + "\"\n#line 1 " + quoted(source_name) + "\n";
  text += source;
  if (text.back() != '\n') text += '\n';
  return text;
}

RewrittenSource rewrite_preprocessed(std::string_view preprocessed, const std::string& source_name) {
  return Rewriter(preprocessed, source_name).run();
}

std::string entry_points(const std::vector<std::string>& kernel_expressions) {
  std::string text = "\n# 1 \"<opkit CPU backend: kernel entry points>\"\nnamespace opkit_cpu_entry {\n";
  std::string table;
  for (std::size_t i = 0; i < kernel_expressions.size(); ++i) {
    const std::string& expr = kernel_expressions[i];
    const std::string n = std::to_string(i);
    text += "static void run_" + n + "(void** args) { ::opkit_cpu::run_guarded(&" + expr + ", args); }\n";
    text += "using params_" + n + " = decltype(::opkit_cpu::param_sizes_of(&" + expr + "));\n";
    table.append("    {").append(quoted(expr)).append(", &run_" + n + ", params_" + n + "::count, params_" + n);
    table.append("::values},\n");
  }
  text += "static const opkit_cpu_kernel kernels[] = {\n" + table + "    {nullptr, nullptr, 0, nullptr}};\n";
  text += "}  // namespace opkit_cpu_entry\n";
  text += "extern \"C\" {\n__attribute__((visibility(\"default\"))) extern const opkit_cpu_module " +
          std::string(OPKIT_CPU_MODULE_SYMBOL) + ";\nconst opkit_cpu_module " + OPKIT_CPU_MODULE_SYMBOL + " = {" +
          std::to_string(OPKIT_CPU_ABI_VERSION) + "u, " + std::to_string(kernel_expressions.size()) +
          "u, opkit_cpu_entry::kernels, &::opkit_cpu::bind, &::opkit_cpu::thread_vars};\n}\n";
  return text;
}

}  // namespace opkit::cpu
