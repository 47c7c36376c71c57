"""Asking the window manager to keep a window on every virtual desktop (the kiosk).

Qt has a flag for "on top" (``Qt.WindowStaysOnTopHint``) but none for "on every desktop".
On X11 the window manager is asked in the words of the Extended Window Manager Hints
(freedesktop.org, EWMH 1.5, "_NET_WM_DESKTOP" and "_NET_WM_STATE"): the window's desktop is
0xFFFFFFFF ("all desktops") and its state ``_NET_WM_STATE_STICKY`` — written as the
window's ``_NET_WM_DESKTOP`` property, which a window manager reads when the window is
mapped, and sent as client messages to the root window, which is how a mapped window
asks. Xlib is reached with
:mod:`ctypes` (``libX11.so.6``, which Qt's X11 platform needs anyway). Elsewhere (Wayland,
Windows, macOS) a program cannot ask this of the desktop: the kiosk account's set-up does
it (docs/presentation.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

#: EWMH: the desktop number that means every desktop.
ALL_DESKTOPS = 0xFFFFFFFF
_CLIENT_MESSAGE = 33
_CARDINAL = 6  # XA_CARDINAL
_REPLACE = 0  # PropModeReplace
_SUBSTRUCTURE = (1 << 19) | (1 << 20)  # SubstructureNotifyMask | SubstructureRedirectMask
_STATE_ADD = 1
_FROM_APPLICATION = 1


class _ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong),
                ("send_event", ctypes.c_int), ("display", ctypes.c_void_p),
                ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]


class _Event(ctypes.Union):
    _fields_ = [("xclient", _ClientMessage), ("pad", ctypes.c_long * 24)]


def _xlib() -> ctypes.CDLL | None:
    """Return Xlib, or None when it cannot be loaded."""
    name = ctypes.util.find_library("X11") or "libX11.so.6"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XInternAtom.restype = ctypes.c_ulong
    lib.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.XDefaultRootWindow.restype = ctypes.c_ulong
    lib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    lib.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                               ctypes.POINTER(_Event)]
    lib.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong,
                                    ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                    ctypes.c_void_p, ctypes.c_int]
    lib.XFlush.argtypes = [ctypes.c_void_p]
    lib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    return lib


def on_every_desktop(widget: QWidget) -> bool:
    """Ask the window manager to show ``widget``'s window on every virtual desktop (before
    it is mapped, and again once it is); return whether the request could be made (False
    off X11, or without Xlib or a display)."""
    if QGuiApplication.platformName() != "xcb" or not os.environ.get("DISPLAY"):
        return False
    lib = _xlib()
    if lib is None:
        return False
    display = lib.XOpenDisplay(None)
    if not display:
        return False
    try:
        root = lib.XDefaultRootWindow(display)
        window = int(widget.winId())
        every = (ctypes.c_ulong * 1)(ALL_DESKTOPS)
        lib.XChangeProperty(display, window, lib.XInternAtom(display, b"_NET_WM_DESKTOP", 0),
                            _CARDINAL, 32, _REPLACE, ctypes.cast(every, ctypes.c_void_p), 1)
        for message, data in (
                ("_NET_WM_DESKTOP", (ALL_DESKTOPS, _FROM_APPLICATION, 0, 0, 0)),
                ("_NET_WM_STATE", (_STATE_ADD,
                                   lib.XInternAtom(display, b"_NET_WM_STATE_STICKY", 0), 0,
                                   _FROM_APPLICATION, 0))):
            event = _Event()
            event.xclient.type = _CLIENT_MESSAGE
            event.xclient.send_event = 1
            event.xclient.window = window
            event.xclient.message_type = lib.XInternAtom(display, message.encode(), 0)
            event.xclient.format = 32
            for i, value in enumerate(data):
                event.xclient.data[i] = value
            lib.XSendEvent(display, root, 0, _SUBSTRUCTURE, ctypes.byref(event))
        lib.XFlush(display)
        return True
    finally:
        lib.XCloseDisplay(display)
