"""The cipher reference the Python tests compare opkit with, with no opkit code in it: the
`cryptography` package, else OpenSSL's libcrypto EVP interface through ctypes (so the tests also
run where `cryptography` is not installed). Also the cipher names' key and IV sizes and a fresh
random key and IV."""

import ctypes
import ctypes.util

STREAM_CIPHERS = ["aes-128-ctr", "aes-192-ctr", "aes-256-ctr", "chacha20"]
AEADS = ["aes-128-gcm", "aes-192-gcm", "aes-256-gcm", "chacha20-poly1305"]
CIPHERS = STREAM_CIPHERS + AEADS


def is_aead(cipher):
    return cipher in AEADS


def key_bytes(cipher):
    return 32 if cipher.startswith("chacha") else int(cipher[4:7]) // 8


def iv_bytes(cipher):
    return 12 if is_aead(cipher) else 16


def fresh(rng, cipher):
    """A random key and IV of the cipher's sizes (chacha20: OpenSSL's counter || nonce, with a
    counter < 2^24, so no 32-bit counter wrap within a test message)."""
    key = rng.bytes(key_bytes(cipher))
    iv = rng.bytes(iv_bytes(cipher))
    if cipher == "chacha20":
        iv = iv[:3] + b"\0" + iv[4:]
    return key, iv


try:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

    def reference(cipher, key, iv, data, aad=b""):
        """(ciphertext, tag or None) of one message, by `cryptography`."""
        if cipher.endswith("ctr"):
            enc = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
            return enc.update(data) + enc.finalize(), None
        if cipher == "chacha20":
            enc = Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor()
            return enc.update(data) + enc.finalize(), None
        sealed = (AESGCM(key) if cipher.endswith("gcm") else ChaCha20Poly1305(key)).encrypt(iv, data, aad or None)
        return sealed[:-16], sealed[-16:]

    REFERENCE = "cryptography"
except ImportError:
    _libcrypto_name = ctypes.util.find_library("crypto")
    _crypto = ctypes.CDLL(_libcrypto_name) if _libcrypto_name else None
    if _crypto is not None:
        _crypto.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
        _crypto.EVP_CIPHER_CTX_free.argtypes = [ctypes.c_void_p]
        _crypto.EVP_get_cipherbyname.restype = ctypes.c_void_p
        _crypto.EVP_get_cipherbyname.argtypes = [ctypes.c_char_p]
        _crypto.EVP_EncryptInit_ex.argtypes = [ctypes.c_void_p] * 5
        _crypto.EVP_CIPHER_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        _crypto.EVP_EncryptUpdate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                                              ctypes.c_char_p, ctypes.c_int]
        _crypto.EVP_EncryptFinal_ex.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    REFERENCE = "libcrypto" if _crypto is not None else None

    def reference(cipher, key, iv, data, aad=b""):
        """(ciphertext, tag or None) of one message, by OpenSSL's EVP_Encrypt*."""
        aead = is_aead(cipher)
        ctx = _crypto.EVP_CIPHER_CTX_new()
        try:
            ok = _crypto.EVP_EncryptInit_ex(ctx, _crypto.EVP_get_cipherbyname(cipher.encode()), None, None, None)
            if aead:
                ok &= _crypto.EVP_CIPHER_CTX_ctrl(ctx, 0x9, len(iv), None)  # EVP_CTRL_AEAD_SET_IVLEN
            ok &= _crypto.EVP_EncryptInit_ex(ctx, None, None, key, iv)
            written = ctypes.c_int(0)
            if aead and aad:
                ok &= _crypto.EVP_EncryptUpdate(ctx, None, ctypes.byref(written), aad, len(aad))
            out = ctypes.create_string_buffer(len(data) + 64)
            ok &= _crypto.EVP_EncryptUpdate(ctx, out, ctypes.byref(written), data, len(data))
            total = written.value
            ok &= _crypto.EVP_EncryptFinal_ex(ctx, ctypes.byref(out, total), ctypes.byref(written))
            total += written.value
            tag = None
            if aead:
                buffer = ctypes.create_string_buffer(16)
                ok &= _crypto.EVP_CIPHER_CTX_ctrl(ctx, 0x10, 16, buffer)  # EVP_CTRL_AEAD_GET_TAG
                tag = buffer.raw
            assert ok == 1, f"libcrypto refused {cipher}"
            return out.raw[:total], tag
        finally:
            _crypto.EVP_CIPHER_CTX_free(ctx)


REFERENCE_MISSING = None if REFERENCE else "no cipher reference: neither `cryptography` nor libcrypto is installed"
