#!/bin/bash
# The kiosk on a real X display, as visitors would try it: Xvfb with openbox as the window
# manager (its stock keys, four desktops), keys and clicks sent with xdotool, screenshots
# with scrot (apt-get install xvfb openbox xdotool scrot x11-utils).
#
#   docs/kiosk_on_x.sh COLLECTION PHOTO OUT_DIR
#
# COLLECTION: a collection (irviewer index PHOTOS --out COLLECTION --titles TITLES.csv);
# PHOTO: a visitor's photo of one of its artworks; OUT_DIR: where the screenshots and the
# report go. IRVIEWER (default: irviewer) is the command that starts the program (the built
# app's path, or "python -m irviewer").
#
# After each of Alt+Tab, Super, Escape, Alt+F4, F11, a right-click, Alt+Escape (openbox:
# lower and unfocus), Ctrl+Alt+Right (openbox: the next desktop), Super+D (openbox: show
# the desktop), another program's window taking the focus, and a photo arriving in the
# watched folder, it prints which of the program's windows are visible and which window
# is active and on top: the kiosk must be the only one, and in front. The staff chord then
# gives the inspector back. Exit code 1 when a check fails.
set -u
COLLECTION=$(realpath "$1"); PHOTO=$(realpath "$2"); OUT=$(realpath -m "$3")
IRVIEWER=${IRVIEWER:-irviewer}
mkdir -p "$OUT/inbox"
rm -f "$OUT/inbox/"*
export DISPLAY=:79 XDG_CONFIG_HOME="$OUT/config"
Xvfb :79 -screen 0 1600x1000x24 >/dev/null 2>&1 & XVFB=$!
sleep 1
openbox >/dev/null 2>&1 & WM=$!
sleep 1
FAILED=0

window() {  # the id of the visible window whose name contains $1 (waits up to 60 s)
  for _ in $(seq 1 60); do
    found=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -1)
    [ -n "$found" ] && { echo "$found"; return; }
    sleep 1
  done
}
program_windows() {  # the names of the program's visible top-level windows
  for id in $(xprop -root _NET_CLIENT_LIST | sed 's/.*#//' | tr ',' ' '); do
    [ "$(xdotool getwindowpid "$id" 2>/dev/null)" = "$APP" ] || continue
    xwininfo -id "$id" | grep -q "IsViewable" && xdotool getwindowname "$id"
  done | sort | paste -sd ',' -
}
on_top() {  # the id of the topmost client window (the window manager's stacking order)
  printf '%d' "$(xprop -root _NET_CLIENT_LIST_STACKING | sed 's/.*#//' | tr ',' '\n' | tail -1 | tr -d ' ')"
}
check() {  # after "$1": the kiosk is the program's only visible window, active, on top
  local shown active top verdict=ok
  shown=$(program_windows); active=$(xdotool getactivewindow 2>/dev/null)
  top=$(on_top)
  [ "$shown" = "irviewer — presentation" ] || verdict=FAIL
  [ "$active" = "$KIOSK" ] || verdict=FAIL
  [ "$top" = "$KIOSK" ] || verdict=FAIL
  kill -0 "$APP" 2>/dev/null || verdict=FAIL
  [ $verdict = ok ] || FAILED=1
  printf '%-34s %-4s visible: %-26s active: %-24s on top: %s\n' "$1" "$verdict" \
    "$shown" "$(xdotool getwindowname "$active" 2>/dev/null)" \
    "$([ "$top" = "$KIOSK" ] && echo kiosk || xdotool getwindowname "$top" 2>/dev/null)"
}

$IRVIEWER "$COLLECTION" --kiosk --watch "$OUT/inbox" --idle 120 >"$OUT/kiosk.log" 2>&1 &
APP=$!
KIOSK=$(window "irviewer — presentation")
sleep 4
echo "kiosk window $KIOSK: $(xprop -id "$KIOSK" _NET_WM_STATE | cut -d= -f2)"
echo "  desktop: $(xprop -id "$KIOSK" _NET_WM_DESKTOP | cut -d= -f2) (4294967295: every desktop)"
check "started"
for key in alt+Tab super Escape alt+F4 F11; do
  xdotool key --clearmodifiers "$key"; sleep 1.5
  check "after $key"
done
xdotool mousemove 800 500 click 3; sleep 1.5
check "after a right-click"
xdotool key --clearmodifiers alt+Escape; sleep 1.5
check "after alt+Escape (lower, unfocus)"
xdotool key --clearmodifiers ctrl+alt+Right; sleep 1.5
check "after ctrl+alt+Right (desktop $(xdotool get_desktop))"
xdotool key --clearmodifiers ctrl+alt+Left; sleep 1
xdotool key --clearmodifiers super+d; sleep 1.5
check "after super+d (show the desktop)"
xmessage -geometry 400x100+100+100 "another program" & OTHER=$!
sleep 1.5
xdotool windowactivate "$(xdotool search --pid $OTHER | head -1)" 2>/dev/null; sleep 1.5
check "after another window took the focus"
kill $OTHER 2>/dev/null
scrot -o "$OUT/kiosk-after-keys.png"
cp "$PHOTO" "$OUT/inbox/visitor.jpg"; sleep 8
check "after a photo arrived in the inbox"
scrot -o "$OUT/kiosk-photo.png"
xdotool key --clearmodifiers ctrl+alt+shift+q; sleep 2
echo "after the staff chord: visible: $(program_windows)"
case "$(program_windows)" in *"— irviewer"*) ;; *) FAILED=1 ;; esac
scrot -o "$OUT/kiosk-staff-left.png"
kill $APP 2>/dev/null; sleep 1
kill $WM $XVFB 2>/dev/null
echo "screenshots in $OUT"
exit $FAILED
