#!/bin/bash
# The curator's screens on a real X display, as a person would use them: Xvfb with openbox
# as the window manager, keys sent with xdotool to the real windows, screenshots with scrot
# (apt-get install xvfb openbox xdotool scrot).
#
#   docs/curator_screens_on_x.sh COLLECTION PHOTO OUT_DIR [DUPLICATED]
#
# COLLECTION: a collection of one photo per artwork with a titles file (irviewer index
# PHOTOS --out COLLECTION --titles TITLES.csv); PHOTO: a visitor's photo of one of them;
# OUT_DIR: where the screenshots go. It edits the first artwork's title (F2), so use a copy.
# DUPLICATED (optional): a collection with a picture filed under two artwork ids.
#
# 1. A title edited in the app (F2, typed) shows in the window and, after a restart, in
#    presentation; the one-photo collection shows the curator's window (no research
#    columns, no plots, no ✗).
# 2. With DUPLICATED: the box the window shows when it opens, and Collection ▸ These are
#    one artwork….
# The kiosk has its own script: docs/kiosk_on_x.sh.
set -u
COLLECTION=$(realpath "$1"); PHOTO=$(realpath "$2"); OUT=$(realpath -m "$3")
DUPLICATED=${4:-}
IRVIEWER=${IRVIEWER:-irviewer}
mkdir -p "$OUT"
export DISPLAY=:79 XDG_CONFIG_HOME="$OUT/config"
Xvfb :79 -screen 0 1600x1000x24 >/dev/null 2>&1 & XVFB=$!
sleep 1
openbox >/dev/null 2>&1 & WM=$!
sleep 1

window() {  # the id of the visible window whose name contains $1 (waits up to 60 s)
  for _ in $(seq 1 60); do
    found=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -1)
    [ -n "$found" ] && { echo "$found"; return; }
    sleep 1
  done
}

$IRVIEWER "$COLLECTION" >"$OUT/edit.log" 2>&1 & APP=$!
MAIN=$(window "— irviewer")
sleep 3
xdotool windowactivate --sync "$MAIN"; sleep 0.5
xdotool key F2; sleep 1.5
xdotool key ctrl+a; xdotool type --delay 20 "Edited in the app"; sleep 0.3
scrot -o "$OUT/edit-dialog.png"
xdotool key Return; sleep 4
scrot -o "$OUT/edit-window.png"
kill $APP; sleep 1
$IRVIEWER "$COLLECTION" --present >"$OUT/present.log" 2>&1 & APP=$!
window "irviewer — presentation" >/dev/null; sleep 4
scrot -o "$OUT/edit-present-after-restart.png"
kill $APP; sleep 1
if [ -n "$DUPLICATED" ]; then
  $IRVIEWER "$(realpath "$DUPLICATED")" >"$OUT/duplicated.log" 2>&1 & APP=$!
  window "— irviewer" >/dev/null; sleep 5
  scrot -o "$OUT/lookalike-warning.png"
  xdotool key Return; sleep 1  # the box closed
  xdotool key alt+c; sleep 1; scrot -o "$OUT/lookalike-menu.png"; xdotool key Escape
  kill $APP; sleep 1
fi
kill $WM $XVFB 2>/dev/null
echo "screenshots in $OUT"
