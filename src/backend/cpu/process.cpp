// posix_spawn with a pipe for stdout+stderr (see process.hpp).
#include "process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "opkit/error.hpp"

extern char** environ;

namespace opkit::cpu {
namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) close(fd);
  }
  void close_end(int which) {
    close(fds[which]);
    fds[which] = -1;
  }
};

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
};

[[noreturn]] void fail(const std::string& what, int err, const std::string& program) {
  throw Error(Errc::runtime, "starting " + program, what + ": " + std::generic_category().message(err));
}

}  // namespace

ProcessResult run_captured(const std::vector<std::string>& argv) {
  const std::string& program = argv.at(0);
  Pipe pipe;
  if (pipe2(pipe.fds, O_CLOEXEC) != 0) fail("pipe2", errno, program);

  SpawnActions file_actions;
  posix_spawn_file_actions_addopen(&file_actions.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&file_actions.actions, pipe.fds[1], 1);
  posix_spawn_file_actions_adddup2(&file_actions.actions, pipe.fds[1], 2);

  std::vector<std::string> env_storage;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env_storage.emplace_back(*e);
  env_storage.emplace_back("LC_ALL=C");
  std::vector<char*> envp, args;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_storage(argv);
  for (auto& a : arg_storage) args.push_back(a.data());
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &file_actions.actions, nullptr, args.data(), envp.data());
  if (rc != 0) fail("posix_spawn", rc, program);
  pipe.close_end(1);

  ProcessResult result;
  char buffer[16384];
  for (;;) {
    ssize_t n = read(pipe.fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) {
    // SIGCHLD ignored by the application: the status is gone; callers judge by the output file.
    result.exit_code = errno == ECHILD ? 0 : -1;
  } else {
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace opkit::cpu
