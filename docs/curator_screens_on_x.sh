#!/bin/bash
# The curator's screens on a real X display, as a person would use them: Xvfb with openbox
# as the window manager, keys sent with xdotool to the real windows, screenshots with scrot
# (apt-get install xvfb openbox xdotool scrot).
#
#   docs/curator_screens_on_x.sh COLLECTION PHOTO OUT_DIR
#
# COLLECTION: a collection of one photo per artwork with a titles file (irviewer index
# PHOTOS --out COLLECTION --titles TITLES.csv); PHOTO: a visitor's photo of one of them;
# OUT_DIR: where the screenshots go. It edits the first artwork's title (F2), so use a copy.
#
# 1. Kiosk: Esc and Alt+F4 leave the kiosk full screen and active; a photo copied into the
#    watched folder is answered; Ctrl+Alt+Shift+Q leaves.
# 2. A title edited in the app (F2, typed) shows in the window and, after a restart, in
#    presentation; the one-photo collection shows no ✗.
set -u
COLLECTION=$(realpath "$1"); PHOTO=$(realpath "$2"); OUT=$(realpath -m "$3")
mkdir -p "$OUT/inbox"
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
visible() { xdotool search --onlyvisible --name "$1" 2>/dev/null | wc -l; }

irviewer "$COLLECTION" --kiosk --watch "$OUT/inbox" --idle 30 >"$OUT/kiosk.log" 2>&1 &
APP=$!
KIOSK=$(window "irviewer — presentation")
sleep 3
xdotool windowactivate --sync "$KIOSK"; sleep 0.5
xdotool key --clearmodifiers Escape; sleep 1
echo "kiosk after Esc: visible $(visible 'irviewer — presentation'), active: $(xdotool getactivewindow getwindowname)"
xdotool key --clearmodifiers alt+F4; sleep 1
echo "kiosk after Alt+F4: visible $(visible 'irviewer — presentation'), active: $(xdotool getactivewindow getwindowname), running: $(kill -0 $APP 2>/dev/null && echo yes || echo no)"
scrot -o "$OUT/kiosk.png"
cp "$PHOTO" "$OUT/inbox/visitor.jpg"; sleep 8
scrot -o "$OUT/kiosk-photo.png"
xdotool key --clearmodifiers ctrl+alt+shift+q; sleep 1.5
echo "kiosk after Ctrl+Alt+Shift+Q: visible $(visible 'irviewer — presentation')"
kill $APP; sleep 1

irviewer "$COLLECTION" >"$OUT/edit.log" 2>&1 & APP=$!
MAIN=$(window "— irviewer")
sleep 3
xdotool windowactivate --sync "$MAIN"; sleep 0.5
xdotool key F2; sleep 1.5
xdotool key ctrl+a; xdotool type --delay 20 "Edited in the app"; sleep 0.3
scrot -o "$OUT/edit-dialog.png"
xdotool key Return; sleep 4
scrot -o "$OUT/edit-window.png"
kill $APP; sleep 1
irviewer "$COLLECTION" --present >"$OUT/present.log" 2>&1 & APP=$!
window "irviewer — presentation" >/dev/null; sleep 4
scrot -o "$OUT/edit-present-after-restart.png"
kill $APP; sleep 1
kill $WM $XVFB 2>/dev/null
echo "screenshots in $OUT"
