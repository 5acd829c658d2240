# Copies games.proto and referee.proto into the build folder, for protoc, changing one line.
#
# games.proto's MoonView has both `bool has_trump = 7;` and a message field `trump = 8;`.
# protoc accepts that, but its C++ code declares `has_trump()` twice (the bool's getter and the
# message's presence test), which does not compile. The referee sets the `trump` message
# exactly when it sets `has_trump` (sdk/wire/observations.py), so the copy drops field 7 (it
# is then skipped on the wire as an unknown field) and the bot tests `has_trump()`: the
# message's presence. Names never travel on the wire: field numbers do.
#   cmake -DSRC=proto-folder -DDST=build-proto-folder -P patch_proto.cmake
foreach(name games referee)
  file(READ "${SRC}/domino_arena/v1/${name}.proto" text)
  string(REPLACE "bool has_trump = 7;" "reserved 7;  // has_trump: see patch_proto.cmake" text "${text}")
  file(WRITE "${DST}/domino_arena/v1/${name}.proto.new" "${text}")
  # only touch the copy when it changes, so an unchanged proto rebuilds nothing
  file(COPY_FILE "${DST}/domino_arena/v1/${name}.proto.new" "${DST}/domino_arena/v1/${name}.proto" ONLY_IF_DIFFERENT)
  file(REMOVE "${DST}/domino_arena/v1/${name}.proto.new")
endforeach()
