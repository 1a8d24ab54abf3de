// kiln-launch: starts the processes of a distributed job on this node, as PyTorch's torchrun.
//
//   kiln-launch --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]
//               [--stop-timeout S] [--] program args...
//
// Starts N copies of the program with RANK (node_rank * N + local rank), LOCAL_RANK,
// WORLD_SIZE (N * M), LOCAL_WORLD_SIZE, GROUP_RANK (the node's rank), MASTER_ADDR (default
// 127.0.0.1) and MASTER_PORT (default 29500) set, which init_process_group's "env://" reads.
// Each line a process writes is printed with its rank in front ("[rank1]: ..."), stdout to
// stdout and stderr to stderr. SIGINT and SIGTERM are passed on to the processes. When one
// process fails (a non-zero exit or a signal), the others get SIGTERM, then SIGKILL after the
// stop timeout (5 s by default), each with the processes it started (a rank runs in a process
// group of its own), and kiln-launch exits with the failing rank's status (128 +
// the signal for a killed one). All succeed: exit 0. Bad arguments: usage and exit 2.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* kUsage =
    "usage: kiln-launch --nproc-per-node N [--nnodes M] [--node-rank R] [--master-addr A]\n"
    "                   [--master-port P] [--stop-timeout S] [--] program args...\n"
    "  --nproc-per-node N  processes to start on this node (one rank each)\n"
    "  --nnodes M          nodes in the job (default 1); WORLD_SIZE = N * M\n"
    "  --node-rank R       this node's rank, 0 to M - 1 (default 0)\n"
    "  --master-addr A     address of the node of rank 0 (default 127.0.0.1)\n"
    "  --master-port P     port of rank 0's rendezvous store (default 29500)\n"
    "  --stop-timeout S    seconds between SIGTERM and SIGKILL when stopping (default 5)\n";

struct Options {
  int nproc = 0, nnodes = 1, node_rank = 0, master_port = 29500;
  double stop_timeout = 5;
  std::string master_addr = "127.0.0.1";
  std::vector<std::string> program;
};

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi) {
    std::cerr << "kiln-launch: " << flag << " '" << text << "' is not an integer in [" << lo << ", "
              << hi << "]\n"
              << kUsage;
    std::exit(2);
  }
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0) break;
    std::string value;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::cerr << "kiln-launch: " << a << " needs a value\n" << kUsage;
      std::exit(2);
    }
    if (a == "--nproc-per-node" || a == "--nproc_per_node") {
      o.nproc = parse_int(a, value, 1, 4096);
    } else if (a == "--nnodes") {
      o.nnodes = parse_int(a, value, 1, 65536);
    } else if (a == "--node-rank" || a == "--node_rank") {
      o.node_rank = parse_int(a, value, 0, 65535);
    } else if (a == "--master-addr" || a == "--master_addr") {
      o.master_addr = value;
    } else if (a == "--master-port" || a == "--master_port") {
      o.master_port = parse_int(a, value, 1, 65535);
    } else if (a == "--stop-timeout") {
      o.stop_timeout = parse_int(a, value, 0, 3600);
    } else {
      std::cerr << "kiln-launch: unknown option " << a << "\n" << kUsage;
      std::exit(2);
    }
  }
  for (; i < argc; ++i) o.program.push_back(argv[i]);
  if (o.nproc == 0 || o.program.empty() || o.node_rank >= o.nnodes) {
    std::cerr << "kiln-launch: "
              << (o.nproc == 0        ? "--nproc-per-node is required"
                  : o.program.empty() ? "no program to run"
                                      : "--node-rank must be below --nnodes")
              << "\n"
              << kUsage;
    std::exit(2);
  }
  return o;
}

std::mutex g_output;

// Copies lines from `fd` to `out`, each after "[rankN]: ", until end of file.
void relay(int fd, FILE* out, int rank) {
  std::string prefix = "[rank" + std::to_string(rank) + "]: ";
  std::string line;
  char buf[4096];
  auto flush_line = [&] {
    std::lock_guard<std::mutex> lock(g_output);
    std::fputs((prefix + line).c_str(), out);
    std::fflush(out);
    line.clear();
  };
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; ++k) {
      line += buf[k];
      if (buf[k] == '\n') flush_line();
    }
  }
  if (!line.empty()) {
    line += '\n';
    flush_line();
  }
  ::close(fd);
}

struct Child {
  pid_t pid = 0;
  int rank = 0;
  int status = -1;  // exit status, or 128 + signal, once it ended
};

int status_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<Child> children(static_cast<size_t>(o.nproc));
  std::vector<std::thread> relays;
  int world = o.nproc * o.nnodes;
  for (int local = 0; local < o.nproc; ++local) {
    int rank = o.node_rank * o.nproc + local;
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      std::perror("kiln-launch: pipe");
      return 1;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);  // its own process group: stopping a rank stops what it started too
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      auto set = [](const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); };
      set("RANK", std::to_string(rank));
      set("LOCAL_RANK", std::to_string(local));
      set("WORLD_SIZE", std::to_string(world));
      set("LOCAL_WORLD_SIZE", std::to_string(o.nproc));
      set("GROUP_RANK", std::to_string(o.node_rank));
      set("MASTER_ADDR", o.master_addr);
      set("MASTER_PORT", std::to_string(o.master_port));
      std::vector<char*> args;
      for (std::string& s : o.program) args.push_back(s.data());
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "kiln-launch: cannot run %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(out[1]);
    ::close(err[1]);
    children[local] = {pid, rank, -1};
    relays.emplace_back(relay, out[0], stdout, rank);
    relays.emplace_back(relay, err[0], stderr, rank);
  }

  int exit_code = 0;
  bool stopping = false;
  auto stop_deadline = std::chrono::steady_clock::now();
  auto stop_all = [&](int sig) {
    for (Child& c : children) {
      if (c.status < 0) ::kill(-c.pid, sig);
    }
  };
  int running = o.nproc;
  while (running > 0) {
    if (g_signal != 0 && !stopping) {
      std::cerr << "kiln-launch: got signal " << g_signal << ": passing it on\n";
      stop_all(g_signal);
      exit_code = 128 + g_signal;
      stopping = true;
      stop_deadline = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(o.stop_timeout * 1000));
    }
    int ws = 0;
    pid_t pid = ::waitpid(-1, &ws, WNOHANG);
    if (pid > 0) {
      for (Child& c : children) {
        if (c.pid != pid) continue;
        c.status = status_of(ws);
        --running;
        if (c.status != 0 && !stopping) {
          std::cerr << "kiln-launch: rank " << c.rank << " (pid " << pid << ") "
                    << (WIFEXITED(ws) ? "exited with status " + std::to_string(c.status)
                                      : "was killed by signal " + std::to_string(WTERMSIG(ws)))
                    << ": stopping the other ranks\n";
          exit_code = c.status;
          stopping = true;
          stop_all(SIGTERM);
          stop_deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(o.stop_timeout * 1000));
        }
      }
      continue;
    }
    if (stopping && std::chrono::steady_clock::now() >= stop_deadline) stop_all(SIGKILL);
    if (stopping && running == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::thread& t : relays) t.join();
  return exit_code;
}
