//! DPoP proofs (RFC 9449): the pure checks of one proof JWT against the request it came with,
//! and the RFC 7638 thumbprint of its key. Whether a `jti` was seen before and which key a
//! token is bound to are the caller's to judge; everything here is a function of its inputs.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{ECDSA_P256_SHA256_FIXED, ED25519, UnparsedPublicKey, VerificationAlgorithm};
use serde_json::{Map, Value};

use crate::token::{constant_time_eq, sha256};

/// The `algs` of a DPoP challenge: every algorithm a proof may be signed with.
pub const DPOP_ALGS: &str = "ES256 EdDSA";

/// The longest proof read. An ES256 proof with `ath` is about 600 bytes; anything near this
/// is not a proof, and its JSON is never parsed.
pub const MAX_PROOF_LEN: usize = 4096;

/// How far a proof's `iat` may be from the server clock, either way (seconds).
pub const IAT_WINDOW_SECS: i64 = 60;

/// The longest `jti` accepted (characters); RFC 9449 asks for 96 random bits, so this leaves
/// room for any sane encoding while bounding what a replay record keys on.
pub const MAX_JTI_LEN: usize = 256;

/// Members of a private or symmetric JWK: a proof's key must carry none of them.
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// What the request a proof comes with must match.
#[derive(Clone, Copy)]
pub struct ProofTarget<'a> {
    /// The request's method, as sent (`htm` must equal it).
    pub method: &'a str,
    /// `DECKHAND_PUBLIC_URL` + the request's path (`htu` must equal it once both are
    /// normalised, see [`normalize_htu`]).
    pub uri: &'a str,
    /// The server clock, Unix seconds.
    pub now_unix: i64,
    /// The access token the request presents (resource requests): `ath` must be its hash.
    /// `None` at the token endpoint, where no `ath` is asked for.
    pub access_token: Option<&'a str>,
}

impl std::fmt::Debug for ProofTarget<'_> {
    // The access token is a credential: say only whether there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofTarget")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .field("now_unix", &self.now_unix)
            .field("access_token", &self.access_token.is_some())
            .finish()
    }
}

/// A proof that passed every check here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedProof {
    /// The RFC 7638 thumbprint (SHA-256, base64url) of the proof's public key.
    pub jkt: String,
    /// The proof's unique id, to be recorded once per key.
    pub jti: String,
}

/// Why a proof was refused. The text is the `error_description` of the answer: it names the
/// check, never the secret material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("the DPoP proof is longer than {MAX_PROOF_LEN} bytes")]
    TooLong,
    #[error("the DPoP proof is not a compact JWS (three base64url parts)")]
    NotCompact,
    #[error("the DPoP proof's {0} is not base64url without padding")]
    BadBase64(&'static str),
    #[error("the DPoP proof's {0} is not a JSON object")]
    NotJsonObject(&'static str),
    #[error("typ must be dpop+jwt")]
    WrongType,
    #[error("alg must be ES256 or EdDSA")]
    UnsupportedAlgorithm,
    #[error("the proof names critical extensions this server does not understand")]
    CriticalExtension,
    #[error("jwk is missing or not an object")]
    MissingKey,
    #[error("jwk must be a public key: it carries the private member {0}")]
    PrivateKey(&'static str),
    #[error("jwk must be a P-256 EC key for ES256 or an Ed25519 OKP key for EdDSA")]
    WrongKeyType,
    #[error("jwk member {0} is missing or not a base64url string of the key's size")]
    BadKeyMember(&'static str),
    #[error("the signature is not 64 bytes")]
    BadSignatureLength,
    #[error("the signature does not verify with jwk")]
    BadSignature,
    #[error("claim {0} is missing or of the wrong type")]
    MissingClaim(&'static str),
    #[error("htm does not match the request method")]
    WrongMethod,
    #[error("htu does not match the request URI")]
    WrongUri,
    #[error("iat is more than {IAT_WINDOW_SECS} seconds from the server time")]
    StaleOrFuture,
    #[error("ath does not match the access token")]
    WrongAccessTokenHash,
    #[error("jti must be 1 to {MAX_JTI_LEN} characters")]
    BadJti,
}

/// The signing algorithms a proof may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Es256,
    EdDsa,
}

impl Algorithm {
    fn parse(alg: &str) -> Option<Self> {
        match alg {
            "ES256" => Some(Self::Es256),
            "EdDSA" => Some(Self::EdDsa),
            _ => None,
        }
    }

    fn verification(self) -> &'static dyn VerificationAlgorithm {
        match self {
            Self::Es256 => &ECDSA_P256_SHA256_FIXED,
            Self::EdDsa => &ED25519,
        }
    }
}

/// A proof's public key: the bytes ring verifies with and the RFC 7638 thumbprint.
struct PublicKey {
    bytes: Vec<u8>,
    jkt: String,
}

/// Checks `proof` against `target`: the form, `typ`, `alg`, the public `jwk`, the signature
/// over the exact compact signing input, `htm`, `htu`, `iat`, `ath` and the `jti`'s shape.
/// Never panics, whatever the input.
pub fn check_proof(proof: &str, target: &ProofTarget<'_>) -> Result<CheckedProof, ProofError> {
    if proof.len() > MAX_PROOF_LEN {
        return Err(ProofError::TooLong);
    }
    let mut parts = proof.split('.');
    let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ProofError::NotCompact);
    };
    let header = json_object(header_b64, "header")?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err(ProofError::WrongType);
    }
    let algorithm = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(Algorithm::parse)
        .ok_or(ProofError::UnsupportedAlgorithm)?;
    if header.contains_key("crit") {
        return Err(ProofError::CriticalExtension);
    }
    let jwk = header
        .get("jwk")
        .and_then(Value::as_object)
        .ok_or(ProofError::MissingKey)?;
    let key = public_key(jwk, algorithm)?;

    let signature = decode(signature_b64, "signature")?;
    if signature.len() != 64 {
        return Err(ProofError::BadSignatureLength);
    }
    // The signing input is the two parts exactly as sent, never a re-encoding of them.
    let signing_input = &proof[..header_b64.len() + 1 + payload_b64.len()];
    UnparsedPublicKey::new(algorithm.verification(), &key.bytes)
        .verify(signing_input.as_bytes(), &signature)
        .map_err(|_| ProofError::BadSignature)?;

    let claims = json_object(payload_b64, "payload")?;
    let claim = |name: &'static str| {
        claims
            .get(name)
            .and_then(Value::as_str)
            .ok_or(ProofError::MissingClaim(name))
    };
    if claim("htm")? != target.method {
        return Err(ProofError::WrongMethod);
    }
    match (normalize_htu(claim("htu")?), normalize_htu(target.uri)) {
        (Some(sent), Some(expected)) if sent == expected => {}
        _ => return Err(ProofError::WrongUri),
    }
    let iat = claims
        .get("iat")
        .and_then(numeric_date)
        .ok_or(ProofError::MissingClaim("iat"))?;
    if iat.abs_diff(target.now_unix) > IAT_WINDOW_SECS.unsigned_abs() {
        return Err(ProofError::StaleOrFuture);
    }
    if let Some(access_token) = target.access_token {
        let expected = access_token_hash(access_token);
        if !constant_time_eq(claim("ath")?.as_bytes(), expected.as_bytes()) {
            return Err(ProofError::WrongAccessTokenHash);
        }
    }
    let jti = claim("jti")?;
    if jti.is_empty() || jti.chars().count() > MAX_JTI_LEN {
        return Err(ProofError::BadJti);
    }
    Ok(CheckedProof {
        jkt: key.jkt,
        jti: jti.to_owned(),
    })
}

/// `ath`: base64url(SHA-256(the access token)), RFC 9449 §4.2.
pub fn access_token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha256(access_token.as_bytes()))
}

/// The RFC 7638 thumbprint of a JWK given by its required members: SHA-256 of the JSON object
/// of exactly those members, sorted by name, without whitespace, then base64url.
pub fn jwk_thumbprint(required_members: &[(&str, &str)]) -> String {
    let canonical: BTreeMap<&str, &str> = required_members.iter().copied().collect();
    // Serialising a map of strings cannot fail; the fallback is never reached.
    let json = serde_json::to_string(&canonical).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(sha256(json.as_bytes()))
}

/// An `htu` as the contract compares it: without query and fragment, scheme and host
/// lower-cased, the scheme's default port dropped, the path kept as sent (an empty path is
/// `/`). `None` for anything that is not an absolute http(s) URI.
pub fn normalize_htu(uri: &str) -> Option<String> {
    let end = uri.find(['?', '#']).unwrap_or(uri.len());
    let (scheme, rest) = uri[..end].split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => return None,
    };
    let (authority, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    Some(format!("{scheme}://{authority}{path}"))
}

fn decode(part: &str, what: &'static str) -> Result<Vec<u8>, ProofError> {
    URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| ProofError::BadBase64(what))
}

fn json_object(part: &str, what: &'static str) -> Result<Map<String, Value>, ProofError> {
    match serde_json::from_slice(&decode(part, what)?) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(ProofError::NotJsonObject(what)),
    }
}

/// A NumericDate (RFC 7519 §2): a JSON number of seconds, fractions dropped.
fn numeric_date(value: &Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(seconds) = number.as_i64() {
        return Some(seconds);
    }
    let seconds = number.as_f64()?.trunc();
    // Outside i64 the proof is absurd anyway: refuse rather than saturate.
    (seconds.is_finite() && seconds.abs() < 9.0e15).then_some(seconds as i64)
}

/// The key of `jwk` for `algorithm`: public, of the algorithm's curve, with coordinates of the
/// curve's size. Whether the point is on the curve, ring decides when it verifies.
fn public_key(jwk: &Map<String, Value>, algorithm: Algorithm) -> Result<PublicKey, ProofError> {
    if let Some(private) = PRIVATE_MEMBERS.into_iter().find(|m| jwk.contains_key(*m)) {
        return Err(ProofError::PrivateKey(private));
    }
    let text = |name: &str| jwk.get(name).and_then(Value::as_str);
    let coordinate = |name: &'static str| {
        let encoded = text(name).ok_or(ProofError::BadKeyMember(name))?;
        match URL_SAFE_NO_PAD.decode(encoded) {
            Ok(bytes) if bytes.len() == 32 => Ok((encoded, bytes)),
            _ => Err(ProofError::BadKeyMember(name)),
        }
    };
    match (algorithm, text("kty"), text("crv")) {
        (Algorithm::Es256, Some("EC"), Some("P-256")) => {
            let (x, x_bytes) = coordinate("x")?;
            let (y, y_bytes) = coordinate("y")?;
            // SEC 1 uncompressed point: 0x04 || x || y.
            let mut bytes = Vec::with_capacity(65);
            bytes.push(0x04);
            bytes.extend_from_slice(&x_bytes);
            bytes.extend_from_slice(&y_bytes);
            let jkt = jwk_thumbprint(&[("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]);
            Ok(PublicKey { bytes, jkt })
        }
        (Algorithm::EdDsa, Some("OKP"), Some("Ed25519")) => {
            let (x, bytes) = coordinate("x")?;
            let jkt = jwk_thumbprint(&[("crv", "Ed25519"), ("kty", "OKP"), ("x", x)]);
            Ok(PublicKey { bytes, jkt })
        }
        _ => Err(ProofError::WrongKeyType),
    }
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _,
    };
    use serde_json::json;

    use super::*;

    const NOW: i64 = 1_790_000_000;
    const URI: &str = "https://api.example.com/api/public/v1/_probe/user";
    const TOKEN: &str = "dh_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    /// Signs bytes with a test key.
    type SignFn = Box<dyn Fn(&[u8]) -> Vec<u8>>;

    /// A test signer: the key's public JWK and a function signing bytes with it.
    struct Signer {
        alg: &'static str,
        jwk: Value,
        sign: SignFn,
    }

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn es256() -> Signer {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref().to_vec();
        Signer {
            alg: "ES256",
            jwk: json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])}),
            sign: Box::new(move |input| {
                pair.sign(&SystemRandom::new(), input)
                    .unwrap()
                    .as_ref()
                    .to_vec()
            }),
        }
    }

    fn ed25519() -> Signer {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        Signer {
            alg: "EdDSA",
            jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref())}),
            sign: Box::new(move |input| pair.sign(input).as_ref().to_vec()),
        }
    }

    fn header(signer: &Signer) -> Value {
        json!({"typ": "dpop+jwt", "alg": signer.alg, "jwk": signer.jwk})
    }

    fn claims() -> Value {
        json!({"jti": "e1j3V_bKic8-LAEB", "htm": "GET", "htu": URI, "iat": NOW,
               "ath": access_token_hash(TOKEN)})
    }

    fn sign(signer: &Signer, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        format!("{input}.{}", b64(&(signer.sign)(input.as_bytes())))
    }

    fn target() -> ProofTarget<'static> {
        ProofTarget {
            method: "GET",
            uri: URI,
            now_unix: NOW,
            access_token: Some(TOKEN),
        }
    }

    fn check(proof: &str) -> Result<CheckedProof, ProofError> {
        check_proof(proof, &target())
    }

    /// A proof by a fresh ES256 key with `edit` applied to its claims.
    fn with_claims(edit: impl FnOnce(&mut Map<String, Value>)) -> String {
        let signer = es256();
        let mut claims = claims();
        edit(claims.as_object_mut().unwrap());
        sign(&signer, &header(&signer), &claims)
    }

    /// A proof by a fresh ES256 key with `edit` applied to its header.
    fn with_header(edit: impl FnOnce(&mut Map<String, Value>)) -> String {
        let signer = es256();
        let mut header = header(&signer);
        edit(header.as_object_mut().unwrap());
        sign(&signer, &header, &claims())
    }

    #[test]
    fn thumbprints_match_rfc_7638_section_3_1() {
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        assert_eq!(
            jwk_thumbprint(&[("kty", "RSA"), ("n", n), ("e", "AQAB")]),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn thumbprints_match_rfc_8037_appendix_a_3() {
        assert_eq!(
            jwk_thumbprint(&[
                ("crv", "Ed25519"),
                ("kty", "OKP"),
                ("x", "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
            ]),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }

    #[test]
    fn valid_es256_and_eddsa_proofs_pass_with_their_key_thumbprint() {
        for signer in [es256(), ed25519()] {
            let proof = sign(&signer, &header(&signer), &claims());
            let checked = check(&proof).unwrap();
            assert_eq!(checked.jti, "e1j3V_bKic8-LAEB");
            let jwk = signer.jwk.as_object().unwrap();
            let members: Vec<(&str, &str)> = jwk
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str().unwrap()))
                .collect();
            assert_eq!(checked.jkt, jwk_thumbprint(&members));
        }
    }

    #[test]
    fn the_token_endpoint_asks_for_no_ath() {
        let proof = with_claims(|claims| {
            claims.remove("ath");
            claims.insert("htm".into(), json!("POST"));
        });
        let at_token_endpoint = ProofTarget {
            method: "POST",
            access_token: None,
            ..target()
        };
        assert!(check_proof(&proof, &at_token_endpoint).is_ok());
    }

    #[test]
    fn typ_must_be_dpop_jwt() {
        for typ in [json!("JWT"), json!("DPOP+JWT"), json!(1)] {
            let proof = with_header(|header| {
                header.insert("typ".into(), typ);
            });
            assert_eq!(check(&proof), Err(ProofError::WrongType));
        }
        let proof = with_header(|header| {
            header.remove("typ");
        });
        assert_eq!(check(&proof), Err(ProofError::WrongType));
    }

    #[test]
    fn only_es256_and_eddsa_are_accepted() {
        for alg in ["none", "HS256", "RS256", "ES384", "PS256", "es256", ""] {
            let proof = with_header(|header| {
                header.insert("alg".into(), json!(alg));
            });
            assert_eq!(
                check(&proof),
                Err(ProofError::UnsupportedAlgorithm),
                "{alg}"
            );
        }
        // An unsigned token (alg none, empty signature) is refused before anything else.
        let unsigned = format!(
            "{}.{}.",
            b64(json!({"typ": "dpop+jwt", "alg": "none"})
                .to_string()
                .as_bytes()),
            b64(claims().to_string().as_bytes())
        );
        assert_eq!(check(&unsigned), Err(ProofError::UnsupportedAlgorithm));
    }

    #[test]
    fn an_hs256_proof_keyed_with_its_own_jwk_is_refused() {
        let key = json!({"kty": "oct", "k": "c2VjcmV0"});
        let header = json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": key});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims().to_string().as_bytes())
        );
        let mac = crate::hmac_sha256(b"secret", input.as_bytes());
        let proof = format!("{input}.{}", b64(&mac));
        assert_eq!(check(&proof), Err(ProofError::UnsupportedAlgorithm));
    }

    #[test]
    fn the_jwk_must_be_public() {
        for private in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
            let proof = with_header(|header| {
                header["jwk"]
                    .as_object_mut()
                    .unwrap()
                    .insert(private.into(), json!("AAAA"));
            });
            assert_eq!(check(&proof), Err(ProofError::PrivateKey(private)));
        }
        let proof = with_header(|header| {
            header.remove("jwk");
        });
        assert_eq!(check(&proof), Err(ProofError::MissingKey));
    }

    #[test]
    fn the_jwk_must_match_the_algorithm_and_curve() {
        let ed = ed25519();
        let es = es256();
        // An Ed25519 key under ES256, a P-256 key under EdDSA, and other curves.
        let mixed = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": ed.jwk});
        assert_eq!(
            check(&sign(&ed, &mixed, &claims())),
            Err(ProofError::WrongKeyType)
        );
        let mixed = json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": es.jwk});
        assert_eq!(
            check(&sign(&es, &mixed, &claims())),
            Err(ProofError::WrongKeyType)
        );
        for crv in ["P-384", "secp256k1", "p-256"] {
            let proof = with_header(|header| {
                header["jwk"]["crv"] = json!(crv);
            });
            assert_eq!(check(&proof), Err(ProofError::WrongKeyType), "{crv}");
        }
    }

    #[test]
    fn key_coordinates_must_have_the_curve_size_and_lie_on_it() {
        let proof = with_header(|header| {
            header["jwk"]["x"] = json!(b64(&[1; 31]));
        });
        assert_eq!(check(&proof), Err(ProofError::BadKeyMember("x")));
        let proof = with_header(|header| {
            header["jwk"]["y"] = json!(7);
        });
        assert_eq!(check(&proof), Err(ProofError::BadKeyMember("y")));
        // (1, 1) is not on P-256: ring refuses the key, so nothing verifies.
        let proof = with_header(|header| {
            let mut one = [0; 32];
            one[31] = 1;
            header["jwk"]["x"] = json!(b64(&one));
            header["jwk"]["y"] = json!(b64(&one));
        });
        assert_eq!(check(&proof), Err(ProofError::BadSignature));
    }

    #[test]
    fn the_signature_must_verify_over_the_exact_signing_input() {
        let signer = es256();
        let proof = sign(&signer, &header(&signer), &claims());
        // Another key's signature over the same input.
        let other = es256();
        let (input, _) = proof.rsplit_once('.').unwrap();
        let forged = format!("{input}.{}", b64(&(other.sign)(input.as_bytes())));
        assert_eq!(check(&forged), Err(ProofError::BadSignature));
        // The same claims re-encoded with whitespace: same JSON, different signing input.
        let (header_b64, _) = input.split_once('.').unwrap();
        let spaced = b64(format!(" {}", claims()).as_bytes());
        let (_, signature) = proof.rsplit_once('.').unwrap();
        let reencoded = format!("{header_b64}.{spaced}.{signature}");
        assert_eq!(check(&reencoded), Err(ProofError::BadSignature));
        // A DER-encoded or truncated ES256 signature is not the fixed 64-byte form.
        let short = format!("{input}.{}", b64(&[0; 63]));
        assert_eq!(check(&short), Err(ProofError::BadSignatureLength));
    }

    #[test]
    fn htm_must_equal_the_method() {
        let proof = with_claims(|claims| {
            claims.insert("htm".into(), json!("POST"));
        });
        assert_eq!(check(&proof), Err(ProofError::WrongMethod));
        let proof = with_claims(|claims| {
            claims.insert("htm".into(), json!("get"));
        });
        assert_eq!(check(&proof), Err(ProofError::WrongMethod));
    }

    #[test]
    fn htu_is_compared_normalised() {
        for sent in [
            "HTTPS://API.example.COM/api/public/v1/_probe/user",
            "https://api.example.com:443/api/public/v1/_probe/user?x=1",
            "https://api.example.com/api/public/v1/_probe/user#frag",
        ] {
            let proof = with_claims(|claims| {
                claims.insert("htu".into(), json!(sent));
            });
            assert!(check(&proof).is_ok(), "{sent}");
        }
        for sent in [
            "http://api.example.com/api/public/v1/_probe/user",
            "https://api.example.com:8443/api/public/v1/_probe/user",
            "https://api.example.com/api/public/v1/_probe/USER",
            "https://evil.example/api/public/v1/_probe/user",
            "https://user@api.example.com/api/public/v1/_probe/user",
            "/api/public/v1/_probe/user",
        ] {
            let proof = with_claims(|claims| {
                claims.insert("htu".into(), json!(sent));
            });
            assert_eq!(check(&proof), Err(ProofError::WrongUri), "{sent}");
        }
    }

    #[test]
    fn normalisation_drops_only_default_ports() {
        assert_eq!(
            normalize_htu("http://Localhost:80").as_deref(),
            Some("http://localhost/")
        );
        assert_eq!(
            normalize_htu("http://localhost:443/x").as_deref(),
            Some("http://localhost:443/x")
        );
        assert_eq!(normalize_htu("ftp://host/x"), None);
        assert_eq!(normalize_htu("https:///x"), None);
    }

    #[test]
    fn iat_must_be_within_60_seconds() {
        for (iat, ok) in [
            (json!(NOW - 60), true),
            (json!(NOW + 60), true),
            (json!(NOW as f64 + 0.5), true),
            (json!(NOW - 61), false),
            (json!(NOW + 61), false),
            (json!(0), false),
        ] {
            let proof = with_claims(|claims| {
                claims.insert("iat".into(), iat.clone());
            });
            assert_eq!(check(&proof).is_ok(), ok, "{iat}");
        }
        let proof = with_claims(|claims| {
            claims.insert("iat".into(), json!(NOW.to_string()));
        });
        assert_eq!(check(&proof), Err(ProofError::MissingClaim("iat")));
    }

    #[test]
    fn ath_must_hash_the_presented_access_token() {
        let proof = with_claims(|claims| {
            claims.insert("ath".into(), json!(access_token_hash("dh_at_other")));
        });
        assert_eq!(check(&proof), Err(ProofError::WrongAccessTokenHash));
        let proof = with_claims(|claims| {
            claims.remove("ath");
        });
        assert_eq!(check(&proof), Err(ProofError::MissingClaim("ath")));
    }

    #[test]
    fn jti_must_be_a_bounded_non_empty_string() {
        for jti in [json!(""), json!("x".repeat(MAX_JTI_LEN + 1))] {
            let proof = with_claims(|claims| {
                claims.insert("jti".into(), jti);
            });
            assert_eq!(check(&proof), Err(ProofError::BadJti));
        }
        let proof = with_claims(|claims| {
            claims.insert("jti".into(), json!(12));
        });
        assert_eq!(check(&proof), Err(ProofError::MissingClaim("jti")));
    }

    #[test]
    fn critical_extensions_are_refused() {
        let proof = with_header(|header| {
            header.insert("crit".into(), json!(["exp"]));
        });
        assert_eq!(check(&proof), Err(ProofError::CriticalExtension));
    }

    #[test]
    fn malformed_compact_forms_are_refused() {
        let signer = es256();
        let good = sign(&signer, &header(&signer), &claims());
        assert_eq!(check("a.b"), Err(ProofError::NotCompact));
        assert_eq!(check(&format!("{good}.x")), Err(ProofError::NotCompact));
        assert_eq!(
            check(&"a".repeat(MAX_PROOF_LEN + 1)),
            Err(ProofError::TooLong)
        );
        assert_eq!(check("e30=.e30.AA"), Err(ProofError::BadBase64("header")));
        assert_eq!(check("!!.e30.AA"), Err(ProofError::BadBase64("header")));
        let array = b64(b"[1]");
        assert_eq!(
            check(&format!("{array}.e30.AA")),
            Err(ProofError::NotJsonObject("header"))
        );
        let (input, _) = good.rsplit_once('.').unwrap();
        assert_eq!(
            check(&format!("{input}.*")),
            Err(ProofError::BadBase64("signature"))
        );
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            #[test]
            fn arbitrary_text_is_refused_without_panicking(proof in "\\PC{0,600}") {
                prop_assert!(check(&proof).is_err());
            }

            #[test]
            fn arbitrary_parts_are_refused_without_panicking(
                header in prop::collection::vec(any::<u8>(), 0..300),
                payload in prop::collection::vec(any::<u8>(), 0..300),
                signature in prop::collection::vec(any::<u8>(), 0..80),
            ) {
                let proof = format!("{}.{}.{}", b64(&header), b64(&payload), b64(&signature));
                prop_assert!(check(&proof).is_err());
            }

            #[test]
            fn headers_with_arbitrary_json_members_are_refused_without_panicking(
                typ in prop_oneof![Just(json!("dpop+jwt")), any::<i64>().prop_map(|n| json!(n))],
                alg in prop_oneof![Just(json!("ES256")), Just(json!("EdDSA")), "[A-Za-z0-9]{0,8}".prop_map(|s| json!(s))],
                kty in prop_oneof![Just(json!("EC")), Just(json!("OKP")), Just(json!(null)), Just(json!([]))],
                crv in prop_oneof![Just(json!("P-256")), Just(json!("Ed25519")), Just(json!({}))],
                x in prop::collection::vec(any::<u8>(), 0..40),
                y in prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
                signature in prop::collection::vec(any::<u8>(), 64..=64),
            ) {
                let mut jwk = json!({"kty": kty, "crv": crv, "x": b64(&x)});
                if let Some(y) = y {
                    jwk["y"] = json!(b64(&y));
                }
                let header = json!({"typ": typ, "alg": alg, "jwk": jwk});
                let proof = format!(
                    "{}.{}.{}",
                    b64(header.to_string().as_bytes()),
                    b64(claims().to_string().as_bytes()),
                    b64(&signature)
                );
                prop_assert!(check(&proof).is_err());
            }

            #[test]
            fn signed_proofs_with_arbitrary_claims_never_panic(
                htm in prop_oneof![Just(json!("GET")), any::<bool>().prop_map(|b| json!(b))],
                iat in prop_oneof![Just(json!(NOW)), any::<f64>().prop_map(|f| json!(f)), any::<i64>().prop_map(|n| json!(n)), Just(json!(u64::MAX))],
                jti in prop_oneof![Just(json!("id")), Just(json!(null)), ".{0,300}".prop_map(|s| json!(s))],
                htu in prop_oneof![Just(json!(URI)), ".{0,80}".prop_map(|s| json!(s))],
            ) {
                let signer = es256();
                let claims = json!({"htm": htm, "htu": htu, "iat": iat, "jti": jti, "ath": access_token_hash(TOKEN)});
                let proof = sign(&signer, &header(&signer), &claims);
                // Whatever the claims, the verdict is an answer (never a panic), and a pass
                // means the claims were the request's.
                if let Ok(checked) = check(&proof) {
                    prop_assert_eq!(Some(checked.jti.as_str()), claims["jti"].as_str());
                    prop_assert_eq!(&claims["htm"], &json!("GET"));
                }
            }
        }
    }
}
