/* command_table.c — the command table: every family's rows (the commands/<family>.def files) in one array, and
 * the subcommand rows in another, handed to exec when the library loads.
 *
 * A .def file is a list of COMMAND(name, arity, fields...) and SUBCOMMAND(...) rows (designated
 * initializers of exec/command.h's gr_command_t). It is included once per array with the other
 * kind of row defined away; list.def is included three times, as the plain commands and as the
 * GOBLIN.PMA.<name> and GOBLIN.SEG.<name> copies whose requests carry that engine. Table order is
 * COMMAND's order, and for requests of one template the first matching row names the request.
 * Adding a command: its row in its family's .def, its builder and handler (commands.h).
 */
#include "commands/commands.h"

#define ROW(prefix, engine_, name_, arity_, ...) {.name = prefix name_, .arity = (arity_), .engine = (engine_), __VA_ARGS__},
#define SUBCOMMAND(...)

static const gr_command_t commands[] = {
#define COMMAND(name_, arity_, ...) ROW("", 0, name_, arity_, __VA_ARGS__)
#include "commands/list.def"
#undef COMMAND
#define COMMAND(name_, arity_, ...) ROW("goblin.pma.", 2, name_, arity_, __VA_ARGS__)
#include "commands/list.def"
#undef COMMAND
#define COMMAND(name_, arity_, ...) ROW("goblin.seg.", 1, name_, arity_, __VA_ARGS__)
#include "commands/list.def"
#undef COMMAND
#define COMMAND(name_, arity_, ...) ROW("", 0, name_, arity_, __VA_ARGS__)
#include "commands/keys.def"
#include "commands/sort.def"
#include "commands/set.def"
#include "commands/string.def"
#include "commands/bitmap.def"
#include "commands/hyperloglog.def"
#include "commands/geo.def"
#include "commands/lolwut.def"
#include "commands/latency.def"
#include "commands/hash.def"
#include "commands/zset.def"
#include "commands/stream.def"
#include "commands/array.def"
#include "commands/server.def"
#include "commands/persistence.def"
#include "commands/goblin.def"
#include "commands/pubsub.def"
#include "commands/aof.def"
#include "commands/slowlog.def"
#include "commands/acl.def"
#include "commands/scripting.def"
#include "commands/function.def"
#include "commands/replication.def"
#undef COMMAND
/* GOBLIN.RT.<ARCMD>: the AR* rows again, served on the RT engine (cmd_array.c reads the engine
 * from the name), then the RT engine's own rows */
#define COMMAND(name_, arity_, ...) ROW("goblin.rt.", 0, name_, arity_, __VA_ARGS__)
#include "commands/array.def"
#undef COMMAND
#define COMMAND(name_, arity_, ...) ROW("", 0, name_, arity_, __VA_ARGS__)
#include "commands/array_rt.def"
#undef COMMAND
};
#undef SUBCOMMAND

static const gr_command_t subcommands[] = {
#define COMMAND(...)
#define SUBCOMMAND(name_, arity_, ...) ROW("", 0, name_, arity_, __VA_ARGS__)
#include "commands/keys.def"
#include "commands/sort.def"
#include "commands/set.def"
#include "commands/string.def"
#include "commands/bitmap.def"
#include "commands/hyperloglog.def"
#include "commands/geo.def"
#include "commands/lolwut.def"
#include "commands/latency.def"
#include "commands/hash.def"
#include "commands/zset.def"
#include "commands/stream.def"
#include "commands/array.def"
#include "commands/server.def"
#include "commands/persistence.def"
#include "commands/goblin.def"
#include "commands/pubsub.def"
#include "commands/aof.def"
#include "commands/slowlog.def"
#include "commands/acl.def"
#include "commands/scripting.def"
#include "commands/function.def"
#include "commands/replication.def"
#undef COMMAND
#undef SUBCOMMAND
};

_Static_assert(sizeof commands / sizeof commands[0] <= GR_COMMAND_STAT_SLOTS,
               "more commands than INFO commandstats has slots (exec/db.h)");

/* exec calls no command by name: it gets the table here, before any code runs (the extension's
 * load, or a C test's start). */
__attribute__((constructor)) static void install_command_table(void) {
    gr_exec_install_commands(commands, sizeof commands / sizeof commands[0], subcommands,
                             sizeof subcommands / sizeof subcommands[0]);
}
