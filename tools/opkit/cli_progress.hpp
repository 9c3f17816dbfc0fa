// The one progress line a long command redraws on stderr (on a terminal): `opkit mine`'s rate and
// ETA, `opkit lz4`'s bytes so far. clear_progress() erases it before anything else is printed.
#pragma once

#include <string>

namespace opkit::cli {

void show_progress(const std::string& line);
void clear_progress();

}  // namespace opkit::cli
