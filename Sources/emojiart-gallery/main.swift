print("emojiart-gallery")
