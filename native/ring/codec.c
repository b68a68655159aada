/* codec.c — the codec's hand-written part: status texts and the header peek.
 *
 * Every message's encode, decode and size case is generated into codec_generated.c by
 * schema/generate.py from schema/goblin.xml; the bounds rules those cases are built from are
 * in codec_wire.h. The API is ring/codec.h.
 */
#include "ring/codec.h"
#include "ring/codec_wire.h"

const char *gr_codec_status_text(gr_codec_status_t status) {
    switch (status) {
    case GR_CODEC_OK: return "ok";
    case GR_CODEC_TRUNCATED: return "message truncated";
    case GR_CODEC_BAD_SCHEMA: return "wrong SBE schema id or version";
    case GR_CODEC_UNKNOWN_TEMPLATE: return "unknown template id";
    case GR_CODEC_SHORT_BLOCK: return "block length shorter than the schema's";
    case GR_CODEC_VAR_DATA_OVERRUN: return "var-data length runs past the end of the message";
    case GR_CODEC_BAD_ENUM: return "enum field out of range";
    case GR_CODEC_TOO_MANY_ITEMS: return "group has more entries than allowed";
    case GR_CODEC_NO_SPACE: return "output buffer too small";
    }
    return "unknown codec status";
}

gr_codec_status_t gr_codec_peek_template(const uint8_t *buffer, size_t length, uint16_t *template_id) {
    gr_wire_header_t header;
    gr_codec_status_t status = gr_wire_read_header(buffer, length, &header);
    if (status == GR_CODEC_OK) *template_id = header.template_id;
    return status;
}
