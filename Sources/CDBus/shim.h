#ifndef TESSERA_CDBUS_SHIM_H
#define TESSERA_CDBUS_SHIM_H

// libdbus for Tessera's D-Bus wrapper (TesseraDBus), which the AT-SPI bridge and the settings portal
// reader share. Swift reaches messages only through libdbus's iterator API (`dbus_message_iter_*`),
// which is not variadic; what Swift cannot import directly (the type codes,
// which libdbus defines as casts of character literals, and the sentinel timeouts) is restated here
// as constants.
#include <dbus/dbus.h>
#include <poll.h>
#include <sys/eventfd.h>

static const int TESSERA_DBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int TESSERA_DBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int TESSERA_DBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int TESSERA_DBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int TESSERA_DBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int TESSERA_DBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int TESSERA_DBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int TESSERA_DBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int TESSERA_DBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int TESSERA_DBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int TESSERA_DBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int TESSERA_DBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int TESSERA_DBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int TESSERA_DBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int TESSERA_DBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int TESSERA_DBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int TESSERA_DBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int TESSERA_DBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int TESSERA_DBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int TESSERA_DBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int TESSERA_DBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int TESSERA_DBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

#endif
