// The help of the server commands, one entry per command, in the order `alsim --help` shows them.
#include <utility>

#include "client/cli/remote_commands.h"

namespace alsim::cli {
namespace {

// Each text starts with a newline (to keep the raw strings' lines in the source as they print).
const std::vector<std::pair<std::string, std::string>>& Usages() {
  static const auto* const usages = new std::vector<std::pair<std::string, std::string>>{
      {"create", R"(
  create SCENE [OPTIONS] create instances of a scene on the server, as one group;
                         prints the group id, the instance ids, nq, nv, nu, the timestep
                         and the importer's warnings. SCENE is a built-in scene
                         (server-info lists them) when it has no '/' and no '.', else an
                         MJCF or URDF file: its text is sent with the files it references
                         (file="...", relative to its directory, or to <compiler meshdir>
                         for meshes, height fields and skins and texturedir for textures)
    --count K            instances to create [default 1]
    --seed S             instance k draws its reset noise from seed S + k [default 0]
    --keyframe K         start every instance at the scene's keyframe K (MJCF <key>), and
                         reset to it: a decimal K is an index from 0, anything else a name.
                         An unknown one is refused, naming the scene's keyframes
                         [default: the scene's initial state]
    --solver NAME, --iterations N, --tolerance X, --budget-us U, --relaxation A, ...
                         every solver flag of 'alsim run --help', with its range and
                         default (the server's defaults are the engine's)
    --json               print one JSON object: group_id, instance_ids, scene, nq, nv,
                         nu, timestep, action_names, warnings
)"},
      {"step", R"(
  step SELECTION [OPTIONS]
                         step instances N times, all of them in one Step call each time;
                         prints per instance its simulation time, status, and the
                         solver's diagnostics of its last step (contacts, islands,
                         iterations, residuals). Exits 1 when an instance diverged (the
                         steps stop there)
    --group G            SELECTION: the instances of group G (as create printed it)
    --ids I,J,...        SELECTION: these instances, in this order (of one scene)
    --steps N            Step calls [default 1]
    --substeps S         steps per call, with the same controls [default 1]
    --random-actions     new controls before each call, uniform in [-1, 1] per actuator
                         (Step returns no specs, so not the actuators' ctrlrange; the
                         engine clamps each control to its ctrlrange where limited)
                         [default: zero controls]
    --seed S             seed of the random controls [default 0]
    --rate HZ            at most HZ Step calls per second, e.g. to watch the instances
                         move in real time (rate x substeps x timestep = 1) [default 0:
                         one call after another]
    --json               print one JSON object: steps, substeps, step_seconds (the
                         server's), wall_seconds, and instances: a list of objects with
                         id, time, status, contacts, islands, max_iterations,
                         mean_iterations, primal_residual, dual_residual,
                         contact_residual
)"},
      {"watch", R"(
  watch SELECTION [OPTIONS]
                         follow instances live (StreamStates): one line per frame with
                         the frame number, the frames dropped so far (a slow terminal
                         gets the newest frame), the server's stream time, and per
                         instance its simulation time t, z = qpos[2] when its first joint
                         looks like a free joint (the height of that body) and its
                         contact count c. Redrawn in place on a terminal (cut to its
                         width), a line per frame otherwise
    --group G | --ids I,J,...  SELECTION, as for step
    --rate HZ            frames per second, at most 1000 [default 10]
    --frames N           stop after N frames; 0 runs until Ctrl-C [default 0]. The
                         stream ends with NOT_FOUND (exit 1) if the instances are
                         destroyed
)"},
      {"bench", R"(
  bench SCENE [OPTIONS]  measure the server: create K instances of SCENE (as for
                         create), step them N times with random controls, uniform within
                         each actuator's ctrlrange ([-1, 1] where it has none), and
                         destroy them (also after an error, or after Ctrl-C, which exits
                         130). Prints the throughput in instance steps per second (wall
                         clock at the client, and the server's stepping time alone) and
                         the Step calls' latency percentiles in microseconds; a progress
                         bar goes to stderr when that is a terminal
    --instances K        instances [default 8]
    --steps N            steps [default 100]
    --substeps S         steps per Step call, with the same controls [default 1]
    --batch              one Step call for all K instances per step (the default)
    --no-batch           K Step calls per step, one instance each, one after another
    --seed S             seed of the instances and of the controls [default 0]
    --solver NAME, --iterations N, ...
                         every solver flag, as for create
    --json               print one JSON object: scene, instances, steps, substeps,
                         batch, calls, nq, nv, nu, create_seconds, wall_seconds,
                         server_step_seconds, instance_steps_per_second,
                         server_instance_steps_per_second, latency_p50_us,
                         latency_p99_us, latency_mean_us, latency_max_us
)"},
      {"list", R"(
  list [--json]          every instance on the server: id, group, scene, solver,
                         simulation time, steps taken and status; --json prints one
                         object with a list "instances" of objects with those keys
)"},
      {"destroy", R"(
  destroy SELECTION      remove instances (--group G or --ids I,J,..., as for step);
                         prints how many were destroyed
)"},
      {"view", R"(
  view [OPTIONS]         serve a live 3D viewer of the server's instances to a browser:
                         open the printed URL. The page lists the live instances and
                         shows the chosen ones (one stream per scene) at the
                         stream's rate, with an orbit camera, a panel per instance (time,
                         steps/s, solver iterations, residuals, contacts), contact points
                         and normals on demand, and pause/resume of the view (the
                         simulations run on). A gRPC client of the server, so the global
                         --tls-* and --token options apply; runs until Ctrl-C
    --listen HOST:PORT   where to serve HTTP [default 127.0.0.1:8080]; port 0 picks a
                         free one. On a loopback address only requests for a loopback
                         host are answered; on another address anyone who reaches it sees
                         the instances this client's token can see (no TLS, no login)
    --web-dir DIR        the page's files (index.html, viewer.js, three.js)
                         [default: the viewer/ directory next to this executable]
    --rate HZ            frames per second of each stream, 1 to 60 [default 30]; the page
                         may ask for another rate in that range
    --max-connections N  browser connections at once (each viewed scene holds one)
                         [default 32]
)"},
  };
  return *usages;
}

}  // namespace

std::string RemoteUsage() {
  std::string text;
  for (const auto& [command, usage] : Usages()) text += usage.substr(1);
  return text;
}

std::string RemoteCommandUsage(const std::string& command) {
  for (const auto& [name, usage] : Usages()) {
    if (name == command) return usage.substr(1);
  }
  return "";
}

}  // namespace alsim::cli
